//! The tuning cache file: the tuner's choices as text, for one adapter,
//! driver and library version.
//!
//! ```text
//! wgcompute tuning 1
//! key <adapter name>|<vendor id>|<device id>|<driver>|<driver info>|<backend>|<library version>
//! <choice> <shape class> <candidate>
//! ...
//! ```
//!
//! A file whose key line differs (another GPU, driver or library version)
//! or that is corrupt in any line is ignored as a whole: the tuner then
//! starts empty and the next save replaces the file. The file is read and
//! written with `pipeline_cache_file`'s rules (regular files only, atomic
//! replacement).

use super::instance::AdapterSummary;
use super::pipeline_cache_file::{self, TUNING};
use crate::error::Result;
use std::collections::BTreeMap;
use std::path::Path;

const HEADER: &str = "wgcompute tuning 1";
/// Larger files are not ours (a few hundred classes take a few KiB).
const MAX_BYTES: usize = 1 << 20;

/// (choice, shape class) -> the chosen candidate's name.
pub type Table = BTreeMap<(String, String), String>;

/// What a file must match to be used: the adapter, its driver and this
/// library's version, on one line.
pub fn key(adapter: &AdapterSummary) -> String {
    let i = &adapter.info;
    let text = format!(
        "{}|{:#x}|{:#x}|{}|{}|{:?}|{}",
        i.name,
        i.vendor,
        i.device,
        i.driver,
        i.driver_info,
        i.backend,
        env!("CARGO_PKG_VERSION")
    );
    text.replace(['\n', '\r'], " ")
}

/// A token of a table line: printable ASCII without spaces.
fn token_ok(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_graphic())
}

/// The entries of `text` if it is a tuning file for `key`, else `None`.
pub fn parse(text: &str, key: &str) -> Option<Table> {
    let mut lines = text.lines();
    if lines.next()? != HEADER || lines.next()?.strip_prefix("key ")? != key {
        return None;
    }
    let mut table = Table::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let parts: Vec<&str> = line.split(' ').collect();
        let [choice, class, candidate] = parts[..] else {
            return None;
        };
        if ![choice, class, candidate].iter().all(|t| token_ok(t)) {
            return None;
        }
        table.insert((choice.to_owned(), class.to_owned()), candidate.to_owned());
    }
    Some(table)
}

/// The file's text for `table` (entries whose names are not valid tokens
/// are left out; the library never makes such names).
pub fn format(table: &Table, key: &str) -> String {
    let mut text = format!("{HEADER}\nkey {key}\n");
    for ((choice, class), candidate) in table {
        if [choice, class, candidate].iter().all(|t| token_ok(t)) {
            text.push_str(&format!("{choice} {class} {candidate}\n"));
        }
    }
    text
}

/// The entries stored at `path` for `key`: empty if there is no file, it
/// cannot be read, or it is for another key or corrupt. Fails only where
/// the path is refused (not a regular file).
pub fn load(path: &Path, key: &str) -> Result<Table> {
    let data = pipeline_cache_file::load(TUNING, path)?.filter(|d| d.len() <= MAX_BYTES);
    let text = data.and_then(|d| String::from_utf8(d).ok());
    Ok(text.and_then(|t| parse(&t, key)).unwrap_or_default())
}

/// Replace the file at `path` with `table`.
pub fn save(path: &Path, key: &str, table: &Table) -> Result<()> {
    pipeline_cache_file::save(TUNING, path, format(table, key).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let mut t = Table::new();
        t.insert(("gemv.axpy".into(), "f32.m8.n4096.k4096.b1".into()), "plain".into());
        t.insert(("reduce_rows.loads".into(), "f32.k1024.r64".into()), "l4".into());
        t
    }

    #[test]
    fn a_saved_table_parses_back_for_its_key_only() {
        let text = format(&table(), "gpu|0x10de");
        assert_eq!(parse(&text, "gpu|0x10de"), Some(table()));
        assert_eq!(parse(&text, "gpu|0x10df"), None, "another adapter's file");
        assert_eq!(parse(&text.replace("tuning 1", "tuning 2"), "gpu|0x10de"), None, "another format");
    }

    #[test]
    fn a_corrupt_line_discards_the_whole_file() {
        let text = format(&table(), "k");
        for bad in ["gemv.axpy f32 plain extra\n", "gemv.axpy f32\n", "gemv.axpy  f32 plain\n", "a b c\u{e9}\n"] {
            assert_eq!(parse(&format!("{text}{bad}"), "k"), None, "{bad:?}");
        }
        assert_eq!(parse("", "k"), None);
        assert_eq!(parse("wgcompute tuning 1\n", "k"), None);
    }

    #[test]
    fn names_that_are_not_tokens_are_not_written() {
        let mut t = table();
        t.insert(("x y".into(), "c".into()), "z".into());
        assert_eq!(parse(&format(&t, "k"), "k"), Some(table()));
    }
}
