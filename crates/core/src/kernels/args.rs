//! The one reading of kernel parameter words on the command line (`run --kernel NAME ...` and
//! `sim NAME ...` both use [`parse_kernel_words`]).
//!
//! Rules:
//! 1. A word `key=value` whose key is a parameter name (letters, digits, `_`) is named;
//!    any other word is positional (`arange(64).view(8,8).diagonal(offset=1)` stays whole,
//!    because its text before `=` is not a name).
//! 2. A named value is split at its top-level commas into a list (a grid axis in `run`);
//!    commas inside `(...)` or `[...]` belong to the value, so
//!    `expr=arange(12).view(3,4)` is one value and `rows=1,2` is two.
//! 3. Positional words are single values (never split).
//! 4. Refused, naming the word: a parameter named twice (the second would silently replace the
//!    first; a grid axis is one word, `cols=1024,2048`), a word with nothing before its `=`
//!    (`=5`), a named value that is empty (`rows=`) or a list with an empty item (`rows=1,,2`).

#![forbid(unsafe_code)]

use thiserror::Error;

/// Why the parameter words cannot be read (rule 4).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KernelWordError {
    #[error(
        "parameter `{key}` is given twice (`{key}={first}`, then `{key}={second}`); give it once \
         (several values in one word, `{key}=a,b`, make a grid in `run`)"
    )]
    Repeated {
        key: String,
        first: String,
        second: String,
    },
    #[error("`{word}` has no parameter name before `=`; write key=value (e.g. rows=64)")]
    NoKey { word: String },
    #[error("`{key}=` gives no value; write {key}=VALUE")]
    EmptyValue { key: String },
    #[error("`{key}={value}` has an empty item in its list; separate values with single commas")]
    EmptyItem { key: String, value: String },
}

/// One word of kernel parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelWord {
    /// The parameter name; empty for a positional value.
    pub key: String,
    /// One value, or several for a grid axis (rule 2).
    pub values: Vec<String>,
}

impl KernelWord {
    /// Whether this word lists more than one value.
    pub fn is_grid(&self) -> bool {
        self.values.len() > 1
    }
}

/// Whether `text` can name a parameter (rule 1).
pub fn is_param_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits `text` at commas outside parentheses and brackets (rule 2); items are trimmed.
pub fn split_top_level(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth: usize = 0;
    let mut start = 0;
    for (at, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(text[start..at].trim().to_string());
                start = at + 1;
            }
            _ => {}
        }
    }
    items.push(text[start..].trim().to_string());
    items
}

/// Reads every word by rules 1–4, in the order given.
pub fn parse_kernel_words(words: &[String]) -> Result<Vec<KernelWord>, KernelWordError> {
    let mut read: Vec<(KernelWord, &str)> = Vec::with_capacity(words.len());
    for word in words {
        let parsed = read_word(word)?;
        if !parsed.key.is_empty()
            && let Some((_, first)) = read.iter().find(|(w, _)| w.key == parsed.key)
        {
            return Err(KernelWordError::Repeated {
                first: value_text(first).to_string(),
                second: value_text(word).to_string(),
                key: parsed.key,
            });
        }
        read.push((parsed, word));
    }
    Ok(read.into_iter().map(|(word, _)| word).collect())
}

/// The text after a named word's first `=`.
fn value_text(word: &str) -> &str {
    word.split_once('=').map_or(word, |(_, value)| value)
}

/// One word by rules 1–4 (all but the repetition, which needs the other words).
fn read_word(word: &str) -> Result<KernelWord, KernelWordError> {
    match word.split_once('=') {
        Some((key, value)) if is_param_name(key.trim()) => {
            let key = key.trim().to_string();
            if value.trim().is_empty() {
                return Err(KernelWordError::EmptyValue { key });
            }
            let values = split_top_level(value);
            if values.iter().any(String::is_empty) {
                return Err(KernelWordError::EmptyItem {
                    key,
                    value: value.to_string(),
                });
            }
            Ok(KernelWord { key, values })
        }
        Some((key, _)) if key.trim().is_empty() => Err(KernelWordError::NoKey {
            word: word.to_string(),
        }),
        _ => Ok(KernelWord {
            key: String::new(),
            values: vec![word.to_string()],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<KernelWord> {
        parse_kernel_words(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    fn refused(list: &[&str]) -> KernelWordError {
        parse_kernel_words(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap_err()
    }

    #[test]
    fn misused_words_are_refused_naming_the_word() {
        // (words, the error)
        let cases: &[(&[&str], KernelWordError)] = &[
            (
                &["rows=1024", "cols=1024,2048", "cols=4"],
                KernelWordError::Repeated {
                    key: "cols".into(),
                    first: "1024,2048".into(),
                    second: "4".into(),
                },
            ),
            (
                &["rows=8", " rows =8"],
                KernelWordError::Repeated {
                    key: "rows".into(),
                    first: "8".into(),
                    second: "8".into(),
                },
            ),
            (&["=5"], KernelWordError::NoKey { word: "=5".into() }),
            (
                &["rows="],
                KernelWordError::EmptyValue { key: "rows".into() },
            ),
            (
                &["rows=1,,2"],
                KernelWordError::EmptyItem {
                    key: "rows".into(),
                    value: "1,,2".into(),
                },
            ),
            (
                &["rows=1,"],
                KernelWordError::EmptyItem {
                    key: "rows".into(),
                    value: "1,".into(),
                },
            ),
        ];
        for (list, want) in cases {
            assert_eq!(&refused(list), want, "{list:?}");
        }
        let message = refused(&["cols=1024,2048", "cols=4"]).to_string();
        assert!(
            message.contains("`cols=1024,2048`, then `cols=4`"),
            "{message}"
        );
    }

    #[test]
    fn positional_values_may_repeat_and_expressions_keep_their_equals_signs() {
        let got = words(&["64", "64", "arange(8).diagonal(offset=1)"]);
        assert_eq!(got.len(), 3);
        assert!(got.iter().all(|w| w.key.is_empty()));
    }

    #[test]
    fn commas_inside_parentheses_and_brackets_belong_to_the_value() {
        let got = words(&["expr=arange(12).view(3,4)[::2, 1]"]);
        assert_eq!(got[0].key, "expr");
        assert_eq!(got[0].values, vec!["arange(12).view(3,4)[::2, 1]"]);
        assert!(!got[0].is_grid());
    }

    #[test]
    fn top_level_commas_make_a_grid() {
        let got = words(&["rows=1, 2", "cols=8"]);
        assert_eq!(got[0].values, vec!["1", "2"]);
        assert!(got[0].is_grid());
        assert_eq!(got[1].values, vec!["8"]);
    }

    #[test]
    fn words_whose_key_is_not_a_name_are_positional_and_whole() {
        let got = words(&["arange(64).view(8,8).diagonal(offset=1)", "64"]);
        assert!(got.iter().all(|w| w.key.is_empty()));
        assert_eq!(
            got[0].values,
            vec!["arange(64).view(8,8).diagonal(offset=1)"]
        );
        assert_eq!(got[1].values, vec!["64"]);
    }

    #[test]
    fn unbalanced_closers_do_not_underflow() {
        assert_eq!(split_top_level("a),b"), vec!["a)", "b"]);
    }
}
