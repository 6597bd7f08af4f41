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

#![forbid(unsafe_code)]

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

/// Reads every word by rules 1–3, in the order given.
pub fn parse_kernel_words(words: &[String]) -> Vec<KernelWord> {
    words
        .iter()
        .map(|word| match word.split_once('=') {
            Some((key, value)) if is_param_name(key.trim()) => KernelWord {
                key: key.trim().to_string(),
                values: split_top_level(value),
            },
            _ => KernelWord {
                key: String::new(),
                values: vec![word.clone()],
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<KernelWord> {
        parse_kernel_words(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>())
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
