//! Line-oriented output on a buffered writer, and JSON helpers in the text form.

use std::io::{self, BufWriter, Write};

use indexa::{key_to_text, write_value, Key, Object, Utf16String, Value};

/// Writes whole lines through a buffer. Commands write their standard output through one of
/// these; a closed pipe surfaces as an [`io::ErrorKind::BrokenPipe`] error.
pub struct Lines<W: Write> {
    out: BufWriter<W>,
    flush_each_line: bool,
}

impl<W: Write> Lines<W> {
    /// Buffers lines and writes them out when the buffer fills (and on [`Lines::finish`]).
    pub fn buffered(out: W) -> Lines<W> {
        Lines {
            out: BufWriter::with_capacity(64 * 1024, out),
            flush_each_line: false,
        }
    }

    /// Flushes after every line, for protocols whose peer waits for each answer.
    pub fn flushed(out: W) -> Lines<W> {
        Lines {
            out: BufWriter::new(out),
            flush_each_line: true,
        }
    }

    /// Writes `text` and a newline.
    ///
    /// # Errors
    /// The writer's error (e.g. [`io::ErrorKind::BrokenPipe`]).
    pub fn line(&mut self, text: &str) -> io::Result<()> {
        self.out.write_all(text.as_bytes())?;
        self.out.write_all(b"\n")?;
        if self.flush_each_line {
            self.out.flush()?;
        }
        Ok(())
    }

    /// Writes `text` without a newline.
    ///
    /// # Errors
    /// The writer's error.
    pub fn write(&mut self, text: &str) -> io::Result<()> {
        self.out.write_all(text.as_bytes())?;
        if self.flush_each_line {
            self.out.flush()?;
        }
        Ok(())
    }

    /// Flushes everything written so far.
    ///
    /// # Errors
    /// The writer's error.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Builds a JSON object in the text form, member by member.
pub struct JsonObject {
    text: String,
    empty: bool,
}

impl Default for JsonObject {
    fn default() -> Self {
        JsonObject::new()
    }
}

impl JsonObject {
    /// An empty object.
    pub fn new() -> JsonObject {
        JsonObject {
            text: String::from("{"),
            empty: true,
        }
    }

    fn name(&mut self, name: &str) {
        if !self.empty {
            self.text.push(',');
        }
        self.empty = false;
        write_value(&Value::string(name), &mut self.text);
        self.text.push(':');
    }

    /// Adds a member whose value is already in the text form.
    pub fn raw(mut self, name: &str, text: &str) -> JsonObject {
        self.name(name);
        self.text.push_str(text);
        self
    }

    /// Adds a member holding `value`.
    pub fn value(mut self, name: &str, value: &Value) -> JsonObject {
        self.name(name);
        write_value(value, &mut self.text);
        self
    }

    /// Adds a member holding `key`.
    pub fn key(self, name: &str, key: &Key) -> JsonObject {
        let text = key_to_text(key);
        self.raw(name, &text)
    }

    /// The finished object's text.
    pub fn finish(mut self) -> String {
        self.text.push('}');
        self.text
    }
}

/// A count, version or key generator's current number as a number value (exact: these stay
/// at or below 2^53, where `f64` holds every integer).
pub fn number(n: u64) -> Value {
    Value::Number(n as f64)
}

/// An object value from `(name, value)` pairs, for building structured output.
pub fn object(members: Vec<(&str, Value)>) -> Value {
    let mut map = Object::default();
    for (name, value) in members {
        map.insert(Utf16String::from(name), value);
    }
    Value::Object(map)
}
