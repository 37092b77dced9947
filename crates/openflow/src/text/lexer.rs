//! Splits ovs-ofctl text into `key[=value]` items, the way Open vSwitch's
//! `ofputil_parse_key_value` does.
//!
//! Items are separated by commas and white space. A key runs up to `:`, `=`, `(` or a
//! separator. After `:` or `=` the value runs to the next separator outside parentheses
//! (so `write_actions(output:1,output:2)` stays one value); after `(` the value is what
//! lies inside the matching `)`. Every item carries the byte offsets of its key and
//! value in the whole input, so errors can point at them.

use super::error::{Span, TextError};

/// One lexed item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Item<'a> {
    /// The whole item as written (`key=value`, `key(value)`, or `key`).
    pub token: Span<'a>,
    pub key: Span<'a>,
    /// The value, if the key was followed by `:`, `=` or `(`.
    pub value: Option<Span<'a>>,
}

impl<'a> Item<'a> {
    pub fn err(&self, message: impl Into<String>) -> TextError {
        self.token.err(message)
    }

    /// The value, or an error saying the key needs one.
    pub fn need_value(&self) -> Result<Span<'a>, TextError> {
        self.value.ok_or_else(|| self.err(format!("\"{}\" needs a value", self.key.text)))
    }

    /// An error unless there is no value.
    pub fn no_value(&self) -> Result<(), TextError> {
        match self.value {
            None => Ok(()),
            Some(_) => Err(self.err(format!("\"{}\" takes no value", self.key.text))),
        }
    }
}

fn is_sep(b: u8) -> bool {
    matches!(b, b',' | b' ' | b'\t' | b'\r' | b'\n')
}

/// A cursor over a piece of text at byte offset `base` of the whole input.
pub(crate) struct Lexer<'a> {
    src: Span<'a>,
    at: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(src: Span<'a>) -> Self {
        Lexer { src, at: 0 }
    }

    /// The next item, `None` at the end, or an error for unbalanced parentheses.
    pub fn next_item(&mut self) -> Result<Option<Item<'a>>, TextError> {
        let b = self.src.text.as_bytes();
        while self.at < b.len() && is_sep(b[self.at]) {
            self.at += 1;
        }
        if self.at >= b.len() {
            return Ok(None);
        }
        let start = self.at;
        while self.at < b.len() && !is_sep(b[self.at]) && !matches!(b[self.at], b':' | b'=' | b'(')
        {
            if b[self.at] == b')' {
                return Err(self.src.slice(self.at, self.at + 1).err("unbalanced \")\""));
            }
            self.at += 1;
        }
        let key = self.src.slice(start, self.at);
        if key.text.is_empty() {
            let end = self.scan_value(start + 1)?;
            return Err(self.src.slice(start, end).err("missing keyword before value"));
        }
        let value = match b.get(self.at) {
            Some(b':') | Some(b'=') => {
                let vstart = self.at + 1;
                let vend = self.scan_value(vstart)?;
                self.at = vend;
                Some(self.src.slice(vstart, vend))
            }
            Some(b'(') => {
                let vstart = self.at + 1;
                let mut depth = 1usize;
                let mut i = vstart;
                while i < b.len() {
                    match b[i] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                if depth != 0 {
                    return Err(self
                        .src
                        .slice(start, b.len())
                        .err("unbalanced \"(\": missing \")\""));
                }
                self.at = i + 1;
                Some(self.src.slice(vstart, i))
            }
            _ => None,
        };
        Ok(Some(Item { token: self.src.slice(start, self.at), key, value }))
    }

    /// Scans a `:`/`=` value from `from`: to the next separator outside parentheses.
    fn scan_value(&self, from: usize) -> Result<usize, TextError> {
        let b = self.src.text.as_bytes();
        let mut depth = 0usize;
        let mut i = from;
        while i < b.len() {
            match b[i] {
                b'(' => depth += 1,
                b')' => {
                    if depth == 0 {
                        return Err(self.src.slice(i, i + 1).err("unbalanced \")\""));
                    }
                    depth -= 1;
                }
                c if depth == 0 && is_sep(c) => break,
                _ => {}
            }
            i += 1;
        }
        if depth != 0 {
            return Err(self.src.slice(from, b.len()).err("unbalanced \"(\": missing \")\""));
        }
        Ok(i)
    }

    /// Everything from byte `from` of this lexer's text to its end (used for `actions=`,
    /// which takes the rest of a flow), and moves the cursor to the end.
    pub fn take_rest_from(&mut self, from: usize) -> Span<'a> {
        let rel = from.saturating_sub(self.src.pos).min(self.src.text.len());
        self.at = self.src.text.len();
        self.src.slice(rel, self.src.text.len())
    }

    /// All remaining items.
    pub fn collect_all(mut self) -> Result<Vec<Item<'a>>, TextError> {
        let mut v = Vec::new();
        while let Some(it) = self.next_item()? {
            v.push(it);
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(s: &str) -> Vec<(String, Option<String>, usize)> {
        Lexer::new(Span::new(s, 0))
            .collect_all()
            .unwrap()
            .into_iter()
            .map(|i| (i.key.text.into(), i.value.map(|v| v.text.into()), i.token.pos))
            .collect()
    }

    #[test]
    fn splits_on_commas_and_spaces() {
        assert_eq!(
            lex("ip, nw_src=1.2.3.4 tp_dst:80"),
            vec![
                ("ip".into(), None, 0),
                ("nw_src".into(), Some("1.2.3.4".into()), 4),
                ("tp_dst".into(), Some("80".into()), 19),
            ]
        );
    }

    #[test]
    fn keeps_parenthesised_values_whole() {
        assert_eq!(
            lex("write_actions(output:1,group:2),controller(max_len=5),x=a(b,c)d"),
            vec![
                ("write_actions".into(), Some("output:1,group:2".into()), 0),
                ("controller".into(), Some("max_len=5".into()), 32),
                ("x".into(), Some("a(b,c)d".into()), 54),
            ]
        );
    }

    #[test]
    fn value_keeps_colons_and_arrows() {
        assert_eq!(
            lex("set_field:::1->ipv6_src"),
            vec![("set_field".into(), Some("::1->ipv6_src".into()), 0)]
        );
    }

    #[test]
    fn unbalanced_parentheses_are_errors_with_positions() {
        let e = Lexer::new(Span::new("a,write_actions(output:1", 0)).collect_all().unwrap_err();
        assert_eq!(e.pos, 2);
        let e = Lexer::new(Span::new("a,b)", 0)).collect_all().unwrap_err();
        assert_eq!(e.pos, 3);
        let e = Lexer::new(Span::new("x=1,=5", 0)).collect_all().unwrap_err();
        assert_eq!((e.pos, e.token.as_str()), (4, "=5"));
    }
}
