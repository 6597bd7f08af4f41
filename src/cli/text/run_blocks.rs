//! How `run`'s summary cuts records into tables: runs of consecutive points of one kernel and
//! one sweep, the parameters they share hoisted into the header, each row labelled by what
//! varies. Where a label spelled out would be too long, each long varying word (a view
//! expression) is shown as `expr #1`, `expr #2`, … with a legend under the table, so the
//! points of one grid stay in one table and each gets a ratio against the first row.

use crate::harness::catalogue_link::param_words;
use crate::harness::run::session::threads_phrase;
use crate::results::PointRecord;

/// Longest point label: a record whose label would be longer starts a new table, where its
/// parameters go to the header.
pub(super) const MAX_LABEL: usize = 40;

/// Longest word a label shows whole; a longer one is named `name #k` and spelled out in the
/// table's legend.
const MAX_WORD: usize = 24;

/// A table's worth of records: what they share goes to its header, what varies labels rows.
pub(super) struct Block<'a> {
    pub(super) records: &'a [PointRecord],
    /// The parameter words every record of the block has (the thread count last).
    pub(super) shared: Vec<String>,
    /// Each record's words that vary within the block; empty for a block of one.
    pub(super) labels: Vec<String>,
    /// Each record's varying words spelled out (the labels with every alias replaced).
    pub(super) full_labels: Vec<String>,
    /// `expr #1 = arange(…)…`: what each alias in the labels stands for.
    pub(super) legend: Vec<String>,
}

/// One record's parameter words keyed by name, the thread count last (keyed `threads`).
fn words_of(r: &PointRecord) -> Vec<(String, String)> {
    let mut words: Vec<(String, String)> = param_words(&r.kernel, &r.params)
        .into_iter()
        .map(|w| (w.split('=').next().unwrap_or_default().to_string(), w))
        .collect();
    words.push(("threads".into(), threads_phrase(r.threads)));
    words
}

/// The varying words of a row; `aliases` names the long ones (`None`: each long word counts
/// as an alias of the longest form, `name #99`, which is what a label's length is checked by).
fn label(
    words: &[(String, String)],
    varying: &[String],
    aliases: Option<&[(String, String)]>,
) -> String {
    let picked: Vec<String> = words
        .iter()
        .filter(|(name, _)| varying.contains(name))
        .map(|(name, word)| {
            if word.chars().count() <= MAX_WORD {
                return word.clone();
            }
            match aliases {
                Some(aliases) => aliases
                    .iter()
                    .find(|(_, w)| w == word)
                    .map_or_else(|| word.clone(), |(alias, _)| alias.clone()),
                None => format!("{name} #99"),
            }
        })
        .collect();
    picked.join(" ")
}

/// The names whose word in `words` is not the one in `first` (or is missing from either).
fn differing(first: &[(String, String)], words: &[(String, String)]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (name, word) in first.iter().chain(words) {
        let same = first.contains(&(name.clone(), word.clone()))
            && words.contains(&(name.clone(), word.clone()));
        if !same && !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// The aliases of a block's long varying words, numbered per name in the order rows give
/// them: (`expr #1`, `expr=arange(…)…`).
fn aliases(rows: &[Vec<(String, String)>], varying: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (name, word) in rows.iter().flatten() {
        if varying.contains(name)
            && word.chars().count() > MAX_WORD
            && !out.iter().any(|(_, w)| w == word)
        {
            let k = out
                .iter()
                .filter(|(a, _)| a.starts_with(&format!("{name} #")))
                .count();
            out.push((format!("{name} #{}", k + 1), word.clone()));
        }
    }
    out
}

fn block<'a>(
    records: &'a [PointRecord],
    rows: &[Vec<(String, String)>],
    varying: &[String],
) -> Block<'a> {
    // Aliases only where some row's label would be too long spelled out.
    let whole = rows
        .iter()
        .all(|w| label(w, varying, Some(&[])).chars().count() <= MAX_LABEL);
    let aliases = if whole {
        Vec::new()
    } else {
        aliases(rows, varying)
    };
    Block {
        records,
        shared: rows[0]
            .iter()
            .filter(|(name, _)| !varying.contains(name))
            .map(|(_, word)| word.clone())
            .collect(),
        labels: rows
            .iter()
            .map(|w| label(w, varying, Some(&aliases)))
            .collect(),
        full_labels: rows.iter().map(|w| label(w, varying, Some(&[]))).collect(),
        legend: aliases
            .iter()
            .map(|(alias, word)| {
                let value = word.split_once('=').map_or(word.as_str(), |(_, v)| v);
                format!("{alias} = {value}")
            })
            .collect(),
    }
}

/// The tables: runs of consecutive records of one kernel and one sweep (or none), each cut
/// before a record that would make some row's label longer than [`MAX_LABEL`] (a grid over
/// `dtype` and `stride` becomes one table per dtype, each labelled by stride alone).
pub(super) fn blocks(records: &[PointRecord]) -> Vec<Block<'_>> {
    let words: Vec<Vec<(String, String)>> = records.iter().map(words_of).collect();
    let key = |r: &PointRecord| (r.kernel.clone(), r.sweep.clone());
    let fits = |rows: &[Vec<(String, String)>], varying: &[String]| {
        rows.iter()
            .all(|w| label(w, varying, None).chars().count() <= MAX_LABEL)
    };
    let mut out = Vec::new();
    let (mut start, mut varying): (usize, Vec<String>) = (0, Vec::new());
    for i in 1..=records.len() {
        // A name varies in a block when some record's word differs from the first record's.
        let joins = i < records.len() && key(&records[i]) == key(&records[start]) && {
            let mut grown = varying.clone();
            for name in differing(&words[start], &words[i]) {
                if !grown.contains(&name) {
                    grown.push(name);
                }
            }
            // Only a grown set can lengthen the labels of the rows already in.
            let ok = if grown.len() == varying.len() {
                fits(&words[i..=i], &grown)
            } else {
                fits(&words[start..=i], &grown)
            };
            if ok {
                varying = grown;
            }
            ok
        };
        if !joins && i > start {
            out.push(block(&records[start..i], &words[start..i], &varying));
            (start, varying) = (i, Vec::new());
        }
    }
    out
}
