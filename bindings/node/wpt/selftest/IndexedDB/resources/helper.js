// A helper script of the harness self-test: top-level declarations become globals.
var helperValue = 42;
function helperTwice(x) { return x * 2; }
