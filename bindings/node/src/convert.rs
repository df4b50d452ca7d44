//! JavaScript values to and from Indexa keys and values.
//!
//! Keys follow "convert a value to a key"
//! (<https://www.w3.org/TR/IndexedDB-3/#convert-value-to-key>): strings as UTF-16 code units
//! (lone surrogates kept), Dates by time value, any BufferSource as its bytes, `-0` as `+0`,
//! arrays member by member (a hole, a cycle or an invalid member makes the whole key invalid).
//!
//! Values: the JavaScript layer hands over either a value that Indexa's value model holds
//! exactly (primitives, plain objects, dense arrays, Dates, ArrayBuffers) or, for everything
//! else structured clone carries, a *projection* of it plus V8's serialization of the whole
//! value; see [`CLONE_FIELD`]. Either comes written as `lib/wire.js` writes values
//! ([`crate::wire::read_value`]); [`stored_value`] puts the two together.

use indexa::{Key, Object, Utf16String, Value, MAX_KEY_DEPTH};
use napi::{sys, Env, JsDate, JsObject, JsString, JsUnknown, NapiRaw, Result, ValueType};

/// The property that holds the serialization of a value Indexa's value model cannot hold
/// exactly (Maps, Sets, typed arrays, BigInts, Blobs, shared references, cycles …). It sits
/// on the top-level object of the stored projection; its name is not an identifier, so no key
/// path can reach it, and the text form writes it as a `$structuredClone` tag.
pub const CLONE_FIELD: &str = indexa::STRUCTURED_CLONE_FIELD;

/// A JavaScript error whose message starts with the spec's error name; the JavaScript layer
/// turns it into a `DOMException` (or a `TypeError`) of that name.
pub fn named_error(name: &str, message: impl std::fmt::Display) -> napi::Error {
    napi::Error::from_reason(format!("{name}: {message}"))
}

/// An engine error as a named JavaScript error.
pub fn engine_error(e: indexa::Error) -> napi::Error {
    named_error(e.name(), e.message())
}

fn strict_equals(env: &Env, a: sys::napi_value, b: sys::napi_value) -> Result<bool> {
    let mut out = false;
    napi::check_status!(unsafe { sys::napi_strict_equals(env.raw(), a, b, &mut out) })?;
    Ok(out)
}

/// The bytes of an ArrayBuffer, typed array or DataView, or `None` for anything else.
pub fn buffer_source_bytes(env: &Env, value: &JsUnknown) -> Result<Option<Vec<u8>>> {
    let raw = unsafe { value.raw() };
    let env_raw = env.raw();
    let mut is = false;
    napi::check_status!(unsafe { sys::napi_is_arraybuffer(env_raw, raw, &mut is) })?;
    if is {
        let mut data = std::ptr::null_mut();
        let mut len = 0usize;
        napi::check_status!(unsafe {
            sys::napi_get_arraybuffer_info(env_raw, raw, &mut data, &mut len)
        })?;
        return Ok(Some(copy_bytes(data, len)));
    }
    if value.is_typedarray()? {
        let mut kind = 0;
        let mut length = 0usize;
        let mut data = std::ptr::null_mut();
        let mut buffer = std::ptr::null_mut();
        let mut offset = 0usize;
        napi::check_status!(unsafe {
            sys::napi_get_typedarray_info(
                env_raw,
                raw,
                &mut kind,
                &mut length,
                &mut data,
                &mut buffer,
                &mut offset,
            )
        })?;
        let element = match kind {
            0..=2 => 1,
            3 | 4 => 2,
            5..=7 => 4,
            _ => 8,
        };
        return Ok(Some(copy_bytes(data, length * element)));
    }
    if value.is_dataview()? {
        let mut length = 0usize;
        let mut data = std::ptr::null_mut();
        let mut buffer = std::ptr::null_mut();
        let mut offset = 0usize;
        napi::check_status!(unsafe {
            sys::napi_get_dataview_info(
                env_raw,
                raw,
                &mut length,
                &mut data,
                &mut buffer,
                &mut offset,
            )
        })?;
        return Ok(Some(copy_bytes(data, length)));
    }
    Ok(None)
}

/// Whether a BufferSource's ArrayBuffer is detached (a detached buffer is not a valid key:
/// IndexedDB 3.0 "convert a value to a key", BufferSource step).
fn is_detached(env: &Env, value: &JsUnknown) -> Result<bool> {
    let env_raw = env.raw();
    let mut buffer = unsafe { value.raw() };
    let mut is = false;
    napi::check_status!(unsafe { sys::napi_is_arraybuffer(env_raw, buffer, &mut is) })?;
    if !is {
        let mut unused = 0usize;
        let mut data = std::ptr::null_mut();
        let mut view_buffer = std::ptr::null_mut();
        if value.is_typedarray()? {
            let mut kind = 0;
            napi::check_status!(unsafe {
                sys::napi_get_typedarray_info(
                    env_raw,
                    buffer,
                    &mut kind,
                    &mut unused,
                    &mut data,
                    &mut view_buffer,
                    &mut unused,
                )
            })?;
        } else {
            napi::check_status!(unsafe {
                sys::napi_get_dataview_info(
                    env_raw,
                    buffer,
                    &mut unused,
                    &mut data,
                    &mut view_buffer,
                    &mut unused,
                )
            })?;
        }
        buffer = view_buffer;
    }
    let mut detached = false;
    napi::check_status!(unsafe {
        sys::napi_is_detached_arraybuffer(env_raw, buffer, &mut detached)
    })?;
    Ok(detached)
}

fn copy_bytes(data: *mut std::ffi::c_void, len: usize) -> Vec<u8> {
    if data.is_null() || len == 0 {
        return Vec::new();
    }
    unsafe { std::slice::from_raw_parts(data as *const u8, len) }.to_vec()
}

fn js_string_units(value: JsUnknown) -> Result<Utf16String> {
    let s: JsString = unsafe { value.cast() };
    let units = s.into_utf16()?;
    // napi-rs reads into a buffer one unit longer than the string, for a terminating 0.
    let all = units.as_slice();
    Ok(Utf16String::from_units(
        all[..all.len().saturating_sub(1)].to_vec(),
    ))
}

/// "Convert a value to a key": `None` when the value is not a valid key.
pub fn convert_value_to_key(env: &Env, value: JsUnknown) -> Result<Option<Key>> {
    let mut seen = Vec::new();
    to_key(env, value, &mut seen)
}

fn to_key(env: &Env, value: JsUnknown, seen: &mut Vec<sys::napi_value>) -> Result<Option<Key>> {
    match value.get_type()? {
        ValueType::Number => Ok(Key::number(value.coerce_to_number()?.get_double()?).ok()),
        ValueType::String => Ok(Some(Key::String(js_string_units(value)?))),
        ValueType::Object => {
            if value.is_date()? {
                let date: JsDate = unsafe { value.cast() };
                return Ok(Key::date(date.value_of()?).ok());
            }
            if let Some(bytes) = buffer_source_bytes(env, &value)? {
                if is_detached(env, &value)? {
                    return Ok(None);
                }
                return Ok(Some(Key::Binary(bytes)));
            }
            if !value.is_array()? {
                return Ok(None);
            }
            let raw = unsafe { value.raw() };
            for other in seen.iter() {
                if strict_equals(env, *other, raw)? {
                    return Ok(None);
                }
            }
            if seen.len() + 1 >= MAX_KEY_DEPTH {
                return Ok(None);
            }
            let array: JsObject = unsafe { value.cast() };
            let len = array.get_array_length()?;
            seen.push(raw);
            let mut keys = Vec::with_capacity(len as usize);
            for i in 0..len {
                if !array.has_element(i)? {
                    seen.pop();
                    return Ok(None);
                }
                match to_key(env, array.get_element::<JsUnknown>(i)?, seen)? {
                    Some(k) => keys.push(k),
                    None => {
                        seen.pop();
                        return Ok(None);
                    }
                }
            }
            seen.pop();
            Ok(Some(Key::Array(keys)))
        }
        _ => Ok(None),
    }
}

/// A key, or a `DataError` naming what was wrong.
pub fn required_key(env: &Env, value: JsUnknown) -> Result<Key> {
    convert_value_to_key(env, value)?
        .ok_or_else(|| named_error("DataError", "the value is not a valid key"))
}

/// "Convert a key to a value".
pub fn key_to_js(env: &Env, key: &Key) -> Result<JsUnknown> {
    Ok(match key {
        Key::Number(n) => env.create_double(*n)?.into_unknown(),
        Key::Date(ms) => env.create_date(*ms)?.into_unknown(),
        Key::String(s) => env.create_string_utf16(s.units())?.into_unknown(),
        Key::Binary(b) => env
            .create_arraybuffer_with_data(b.clone())?
            .into_raw()
            .into_unknown(),
        Key::Array(items) => {
            let mut elements = Vec::with_capacity(items.len());
            for item in items {
                elements.push(key_to_js(env, item)?);
            }
            array_of(env, elements, &mut Names::default())?
        }
    })
}

/// The JavaScript strings made for array indices while building a key, so that each index
/// is made once. Valid in the handle scope it was filled in.
#[derive(Default)]
struct Names {
    indices: Vec<sys::napi_value>,
}

impl Names {
    fn index(&mut self, env: &Env, i: usize) -> Result<sys::napi_value> {
        while self.indices.len() <= i {
            let name = env.create_string(&self.indices.len().to_string())?;
            self.indices.push(unsafe { name.raw() });
        }
        Ok(self.indices[i])
    }
}

/// Defines own enumerable, writable, configurable data properties `(name, value)` on
/// `object`, as CreateDataProperty does: no setter or getter on the prototype chain runs.
fn create_data_properties(
    env: &Env,
    object: sys::napi_value,
    properties: &[(sys::napi_value, sys::napi_value)],
) -> Result<()> {
    use sys::PropertyAttributes::{configurable, enumerable, writable};
    let descriptors: Vec<sys::napi_property_descriptor> = properties
        .iter()
        .map(|&(name, value)| sys::napi_property_descriptor {
            utf8name: std::ptr::null(),
            name,
            method: None,
            getter: None,
            setter: None,
            value,
            attributes: writable | enumerable | configurable,
            data: std::ptr::null_mut(),
        })
        .collect();
    napi::check_status!(unsafe {
        sys::napi_define_properties(env.raw(), object, descriptors.len(), descriptors.as_ptr())
    })
}

/// An array of `elements`, built with CreateDataProperty.
fn array_of(env: &Env, elements: Vec<JsUnknown>, names: &mut Names) -> Result<JsUnknown> {
    let array = env.create_array_with_length(elements.len())?;
    let mut properties = Vec::with_capacity(elements.len());
    for (i, element) in elements.into_iter().enumerate() {
        properties.push((names.index(env, i)?, unsafe { element.raw() }));
    }
    create_data_properties(env, unsafe { array.raw() }, &properties)?;
    Ok(array.into_unknown())
}

/// The value as stored: the projection alone, or with V8's serialization of the whole value
/// under [`CLONE_FIELD`] of a top-level object (a projection that is not an object becomes an
/// object holding only the serialization).
pub fn stored_value(projection: Value, clone: Option<Vec<u8>>) -> Value {
    let Some(bytes) = clone else {
        return projection;
    };
    let field = Utf16String::from(CLONE_FIELD);
    let mut map = match projection {
        Value::Object(map) => map,
        _ => Object::default(),
    };
    map.shift_remove(&field);
    map.insert(field, Value::Binary(bytes));
    Value::Object(map)
}
