//! Files of flows or groups (`add-flows FILE`, `add-groups FILE`, `add-flow -`): one
//! item a line, `#` starting a comment that runs to the end of the line, blank lines
//! skipped, `-` meaning standard input, as ovs-ofctl reads them. A line may start with
//! a command word — `add`, `modify`, `modify_strict`, `delete`, `delete_strict` for
//! flows; `add`, `modify`, `delete` for groups — and otherwise is an addition.
//! Every line is parsed before anything is sent; the first bad line stops the run
//! with `FILE:LINE: what is wrong`. A flow file (not standard input) is read twice,
//! once to check it and once to send it line by line, so that a file of a million
//! flows costs no more memory than a few.

use std::io::{BufRead, BufReader, Read};

use openflow::v13::flow_mod::{FlowMod, FlowModCommand};
use openflow::v13::group_mod::{GroupMod, GroupModCommand};

/// One line that holds an item: its 1-based number and its text (comment removed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub number: usize,
    pub text: String,
}

/// The lines of `name` (`-` for standard input) that hold items.
pub fn read_lines(name: &str) -> Result<Vec<Line>, String> {
    lines_of(name)?.collect()
}

/// The lines of `name` (`-` for standard input) that hold items, read as they are
/// taken.
pub fn lines_of(name: &str) -> Result<impl Iterator<Item = Result<Line, String>>, String> {
    let reader: Box<dyn Read> = if name == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(name).map_err(|e| format!("{name}: open failed ({e})"))?)
    };
    let name = name.to_string();
    Ok(item_lines(BufReader::new(reader))
        .map(move |l| l.map_err(|e| format!("{name}: read failed ({e})"))))
}

/// The item lines of a stream.
pub fn split_lines(r: impl BufRead) -> std::io::Result<Vec<Line>> {
    item_lines(r).collect()
}

/// The item lines of a stream, as they are read.
fn item_lines(r: impl BufRead) -> impl Iterator<Item = std::io::Result<Line>> {
    r.lines().enumerate().filter_map(|(i, line)| {
        let line = match line {
            Ok(l) => l,
            Err(e) => return Some(Err(e)),
        };
        let text = match line.find('#') {
            Some(at) => &line[..at],
            None => &line[..],
        };
        if text.trim_matches([' ', '\t', '\r', '\n']).is_empty() {
            return None;
        }
        Some(Ok(Line { number: i + 1, text: text.to_string() }))
    })
}

/// Splits a leading command word off a line: `(word, rest)` when the first token is
/// one of `words`.
fn command_word<'a>(text: &'a str, words: &[&str]) -> (Option<&'a str>, &'a str) {
    let t = text.trim_start_matches([' ', '\t', '\r', '\n']);
    let end = t.find([',', ' ', '\t', '\r', '\n']).unwrap_or(t.len());
    let first = &t[..end];
    if words.contains(&first) {
        (Some(first), &t[end..])
    } else {
        (None, t)
    }
}

/// Parses a file's lines as flows; `default` is the command of lines without a command
/// word (ovs-ofctl: add).
pub fn parse_flows(
    file: &str,
    lines: &[Line],
    default: FlowModCommand,
) -> Result<Vec<(usize, FlowMod)>, String> {
    lines.iter().map(|l| parse_flow_line(file, l, default).map(|fm| (l.number, fm))).collect()
}

/// Parses one line of a flow file (see [`parse_flows`]); an error says
/// `FILE:LINE: what is wrong`.
pub fn parse_flow_line(file: &str, l: &Line, default: FlowModCommand) -> Result<FlowMod, String> {
    let words = ["add", "modify", "modify_strict", "delete", "delete_strict"];
    parse_line(file, l, &words, |word, rest| {
        let command = match word {
            Some("add") => FlowModCommand::Add,
            Some("modify") => FlowModCommand::Modify,
            Some("modify_strict") => FlowModCommand::ModifyStrict,
            Some("delete") => FlowModCommand::Delete,
            Some("delete_strict") => FlowModCommand::DeleteStrict,
            _ => default,
        };
        super::commands::parse_flow_arg(rest, command)
    })
}

/// Parses a file's lines as groups.
pub fn parse_groups(file: &str, lines: &[Line]) -> Result<Vec<(usize, GroupMod)>, String> {
    parse_lines(file, lines, &["add", "modify", "delete"], |word, rest| {
        let command = match word {
            Some("modify") => GroupModCommand::Modify,
            Some("delete") => GroupModCommand::Delete,
            _ => GroupModCommand::Add,
        };
        openflow::text::parse_group_mod(rest, command).map_err(|e| e.to_string())
    })
}

/// Parses each line with `parse` ([`parse_line`]); the items with their line numbers,
/// or the first failure.
fn parse_lines<T>(
    file: &str,
    lines: &[Line],
    words: &[&str],
    parse: impl Fn(Option<&str>, &str) -> Result<T, String>,
) -> Result<Vec<(usize, T)>, String> {
    lines.iter().map(|l| parse_line(file, l, words, &parse).map(|it| (l.number, it))).collect()
}

/// Parses a line with `parse`, which gets the line's command word (when its first
/// token is one of `words`) and the rest; a failure reads `FILE:LINE: what is wrong`.
fn parse_line<T>(
    file: &str,
    l: &Line,
    words: &[&str],
    parse: impl Fn(Option<&str>, &str) -> Result<T, String>,
) -> Result<T, String> {
    let (word, rest) = command_word(&l.text, words);
    let rest = rest.trim_start_matches([',', ' ', '\t']);
    parse(word, rest).map_err(|e| format!("{file}:{}: {e}", l.number))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_blank_lines_and_numbers() {
        let text = "# header\n\nip,actions=drop # trailing\n   \n\tpriority=5,actions=output:1\n";
        let lines = split_lines(text.as_bytes()).unwrap();
        assert_eq!(
            lines,
            vec![
                Line { number: 3, text: "ip,actions=drop ".into() },
                Line { number: 5, text: "\tpriority=5,actions=output:1".into() },
            ]
        );
    }

    #[test]
    fn flow_lines_with_command_words() {
        let lines = split_lines(
            "add priority=1,actions=drop\ndelete_strict priority=1\nmodify ip actions=output:2\nactions=drop\n".as_bytes(),
        )
        .unwrap();
        let flows = parse_flows("f", &lines, FlowModCommand::Add).unwrap();
        let cmds: Vec<_> = flows.iter().map(|(n, f)| (*n, f.command)).collect();
        assert_eq!(
            cmds,
            vec![
                (1, FlowModCommand::Add),
                (2, FlowModCommand::DeleteStrict),
                (3, FlowModCommand::Modify),
                (4, FlowModCommand::Add),
            ]
        );
    }

    #[test]
    fn bad_line_names_file_and_line() {
        let lines =
            split_lines("ip,actions=drop\n\nip,nw_scr=1.2.3.4,actions=drop\n".as_bytes()).unwrap();
        let e = parse_flows("flows.txt", &lines, FlowModCommand::Add).unwrap_err();
        assert!(e.starts_with("flows.txt:3: "), "{e}");
        assert!(e.contains("nw_scr"), "{e}");
    }

    #[test]
    fn group_lines() {
        let lines =
            split_lines("group_id=1,type=all,bucket=output:1\ndelete group_id=1\n".as_bytes())
                .unwrap();
        let g = parse_groups("g", &lines).unwrap();
        assert_eq!(g[0].1.command, GroupModCommand::Add);
        assert_eq!(g[1].1.command, GroupModCommand::Delete);
        let e = parse_groups("g", &split_lines("\ngroup_id=x\n".as_bytes()).unwrap()).unwrap_err();
        assert!(e.starts_with("g:2: "), "{e}");
    }
}
