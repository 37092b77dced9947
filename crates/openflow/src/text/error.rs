//! [`TextError`]: why a piece of ovs-ofctl text did not parse, and where.

use std::fmt;

/// A parse failure in ovs-ofctl text.
///
/// `pos` is the 0-based byte offset into the whole input of the offending `token` (a
/// `key=value` pair, an action, or a part of one); `Display` prints it as a 1-based
/// column counted in bytes, e.g. `at column 23 ("nw_scr=1.2.3.4"): unknown field "nw_scr"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextError {
    /// 0-based byte offset of `token` in the input.
    pub pos: usize,
    /// The offending text, as written.
    pub token: String,
    /// What was wrong with it.
    pub message: String,
}

impl TextError {
    pub fn new(pos: usize, token: impl Into<String>, message: impl Into<String>) -> Self {
        TextError { pos, token: token.into(), message: message.into() }
    }

    /// The 1-based column (in bytes) that `Display` reports.
    pub fn column(&self) -> usize {
        self.pos + 1
    }
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at column {} ({:?}): {}", self.column(), self.token, self.message)
    }
}

impl std::error::Error for TextError {}

/// A located piece of input: the text and its byte offset in the whole input. Errors
/// about it name both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span<'a> {
    pub text: &'a str,
    pub pos: usize,
}

impl<'a> Span<'a> {
    pub fn new(text: &'a str, pos: usize) -> Self {
        Span { text, pos }
    }

    pub fn err(&self, message: impl Into<String>) -> TextError {
        TextError::new(self.pos, self.text, message)
    }

    /// The sub-span `text[from..to]`; both must be char boundaries inside `text`.
    pub fn slice(&self, from: usize, to: usize) -> Span<'a> {
        Span { text: self.text.get(from..to).unwrap_or(""), pos: self.pos + from }
    }

    /// Splits at the first `sep`: the part before and, if present, the part after.
    pub fn split_once(&self, sep: &str) -> (Span<'a>, Option<Span<'a>>) {
        match self.text.find(sep) {
            Some(i) => (self.slice(0, i), Some(self.slice(i + sep.len(), self.text.len()))),
            None => (*self, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_column_token_and_message() {
        let e = TextError::new(22, "nw_scr=1.2.3.4", "unknown field \"nw_scr\"");
        assert_eq!(e.to_string(), "at column 23 (\"nw_scr=1.2.3.4\"): unknown field \"nw_scr\"");
    }

    #[test]
    fn span_split_keeps_offsets() {
        let s = Span::new("a/b", 10);
        let (a, b) = s.split_once("/");
        assert_eq!((a.text, a.pos), ("a", 10));
        let b = b.unwrap();
        assert_eq!((b.text, b.pos), ("b", 12));
        assert_eq!(s.split_once("x").1, None);
    }
}
