//! Tokenizer and parser of the EXPR language.
//!
//! ```text
//! EXPR    := "arange" "(" INT ")" POSTFIX*
//! POSTFIX := "." NAME [ "(" [ARG ("," ARG)* [","]] ")" ] | "[" ITEM ("," ITEM)* [","] "]"
//! ARG     := VALUE | NAME "=" VALUE
//! VALUE   := INT | "None" | "(" [INT ("," INT)* [","]] ")" | "[" [INT ("," INT)* [","]] "]"
//! ITEM    := INT | [INT] ":" [INT] [":" [INT]] | "None" | "..."
//! INT     := ["-"] DIGITS
//! ```
//! Whitespace is allowed between any two tokens. The parser never panics: every malformed
//! input becomes a `parse` (or `overflow`, for huge literals) error with a 1-based column.

use crate::layout::error::LayoutError;
use crate::layout::ops::IndexItem;

/// A parsed expression: the storage size and the postfix steps in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    pub arange: usize,
    pub steps: Vec<Step>,
}

/// One postfix step, with the source text it came from (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub text: String,
    /// 1-based column where the step starts.
    pub column: usize,
    pub kind: StepKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepKind {
    /// `.name` or `.name(args)`; `args` is `None` without parentheses.
    Method {
        name: String,
        args: Option<Vec<Arg>>,
    },
    /// `[items]`.
    Index(Vec<IndexItem>),
}

/// One call argument, positional or `name=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub keyword: Option<String>,
    pub value: Value,
    pub column: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    None,
    Tuple(Vec<i64>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Int(i64),
    Name(String),
    Punct(char),
    Ellipsis,
}

#[derive(Debug, Clone)]
struct Spanned {
    token: Token,
    /// Char index where the token starts.
    start: usize,
    /// Char index just past the token.
    end: usize,
}

fn parse_error(column: usize, message: impl Into<String>) -> LayoutError {
    LayoutError::Parse {
        column,
        message: message.into(),
    }
}

fn tokenize(chars: &[char]) -> Result<Vec<Spanned>, LayoutError> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let token = if c.is_ascii_digit() {
            let mut value: i64 = 0;
            while i < chars.len() && chars[i].is_ascii_digit() {
                let digit = chars[i] as i64 - '0' as i64;
                value = value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(digit))
                    .ok_or_else(|| {
                        LayoutError::overflow(format!(
                            "the integer at column {} (it does not fit in 64 bits)",
                            start + 1
                        ))
                    })?;
                i += 1;
            }
            Token::Int(value)
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Token::Name(chars[start..i].iter().collect())
        } else if c == '.' && chars.get(i + 1) == Some(&'.') {
            if chars.get(i + 2) != Some(&'.') {
                return Err(parse_error(start + 1, "expected '...' (an ellipsis)"));
            }
            i += 3;
            Token::Ellipsis
        } else if "()[],:.=-".contains(c) {
            i += 1;
            Token::Punct(c)
        } else {
            return Err(parse_error(
                start + 1,
                format!("unexpected character {c:?}"),
            ));
        };
        tokens.push(Spanned {
            token,
            start,
            end: i,
        });
    }
    Ok(tokens)
}

struct Parser<'a> {
    chars: &'a [char],
    tokens: Vec<Spanned>,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|t| &t.token)
    }

    /// 1-based column of the next token (or one past the end of the input).
    fn column(&self) -> usize {
        self.tokens
            .get(self.pos)
            .map_or(self.chars.len() + 1, |t| t.start + 1)
    }

    fn describe_next(&self) -> String {
        match self.peek() {
            None => "the end of the expression".to_string(),
            Some(Token::Int(v)) => format!("the number {v}"),
            Some(Token::Name(n)) => format!("'{n}'"),
            Some(Token::Punct(c)) => format!("'{c}'"),
            Some(Token::Ellipsis) => "'...'".to_string(),
        }
    }

    fn unexpected(&self, expected: &str) -> LayoutError {
        parse_error(
            self.column(),
            format!("expected {expected}, found {}", self.describe_next()),
        )
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Token::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), LayoutError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{c}'")))
        }
    }

    fn at_int(&self) -> bool {
        matches!(self.peek(), Some(Token::Int(_)) | Some(Token::Punct('-')))
    }

    fn int(&mut self) -> Result<i64, LayoutError> {
        let negative = self.eat('-');
        match self.peek() {
            Some(&Token::Int(v)) => {
                self.pos += 1;
                Ok(if negative { -v } else { v })
            }
            _ => Err(self.unexpected("an integer")),
        }
    }

    fn name(&mut self) -> Result<String, LayoutError> {
        match self.peek() {
            Some(Token::Name(n)) => {
                let n = n.clone();
                self.pos += 1;
                Ok(n)
            }
            _ => Err(self.unexpected("a name")),
        }
    }

    fn text_since(&self, first_token: usize) -> String {
        let start = self.tokens[first_token].start;
        let end = self.tokens[self.pos - 1].end;
        self.chars[start..end].iter().collect()
    }

    fn expr(&mut self) -> Result<Expr, LayoutError> {
        let column = self.column();
        match self.peek() {
            Some(Token::Name(n)) if n == "arange" => self.pos += 1,
            _ => {
                return Err(parse_error(
                    column,
                    format!(
                        "an expression starts with arange(N), found {}",
                        self.describe_next()
                    ),
                ));
            }
        }
        self.expect('(')?;
        let n_column = self.column();
        let n = self.int()?;
        let arange = usize::try_from(n).map_err(|_| {
            parse_error(
                n_column,
                format!("arange needs a non-negative size, got {n}"),
            )
        })?;
        self.expect(')')?;
        let mut steps = Vec::new();
        while self.pos < self.tokens.len() {
            steps.push(self.step()?);
        }
        Ok(Expr { arange, steps })
    }

    fn step(&mut self) -> Result<Step, LayoutError> {
        let first = self.pos;
        let column = self.column();
        let kind = if self.eat('.') {
            let name = self.name()?;
            let args = if self.eat('(') {
                Some(self.args()?)
            } else {
                None
            };
            StepKind::Method { name, args }
        } else if self.eat('[') {
            StepKind::Index(self.items()?)
        } else {
            return Err(self.unexpected("'.' or '[' (a method, attribute or index)"));
        };
        Ok(Step {
            text: self.text_since(first),
            column,
            kind,
        })
    }

    fn args(&mut self) -> Result<Vec<Arg>, LayoutError> {
        let mut args = Vec::new();
        loop {
            if self.eat(')') {
                return Ok(args);
            }
            let column = self.column();
            let keyword = match (self.peek(), self.tokens.get(self.pos + 1).map(|t| &t.token)) {
                (Some(Token::Name(n)), Some(Token::Punct('='))) => {
                    let n = n.clone();
                    self.pos += 2;
                    Some(n)
                }
                _ => None,
            };
            let value = self.value()?;
            args.push(Arg {
                keyword,
                value,
                column,
            });
            if !self.eat(',') {
                self.expect(')')?;
                return Ok(args);
            }
        }
    }

    fn value(&mut self) -> Result<Value, LayoutError> {
        match self.peek() {
            Some(Token::Name(n)) if n == "None" => {
                self.pos += 1;
                Ok(Value::None)
            }
            Some(Token::Punct(open @ ('(' | '['))) => {
                let close = if *open == '(' { ')' } else { ']' };
                self.pos += 1;
                let mut values = Vec::new();
                loop {
                    if self.eat(close) {
                        return Ok(Value::Tuple(values));
                    }
                    values.push(self.int()?);
                    if !self.eat(',') {
                        self.expect(close)?;
                        return Ok(Value::Tuple(values));
                    }
                }
            }
            _ if self.at_int() => Ok(Value::Int(self.int()?)),
            _ => Err(self.unexpected("an integer, a tuple like (3, 4), or None")),
        }
    }

    fn items(&mut self) -> Result<Vec<IndexItem>, LayoutError> {
        let mut items = Vec::new();
        loop {
            if self.peek() == Some(&Token::Punct(']')) && !items.is_empty() {
                self.pos += 1;
                return Ok(items);
            }
            items.push(self.item()?);
            if !self.eat(',') {
                self.expect(']')?;
                return Ok(items);
            }
        }
    }

    fn item(&mut self) -> Result<IndexItem, LayoutError> {
        match self.peek() {
            Some(Token::Ellipsis) => {
                self.pos += 1;
                return Ok(IndexItem::Ellipsis);
            }
            Some(Token::Name(n)) if n == "None" => {
                self.pos += 1;
                return Ok(IndexItem::NewAxis);
            }
            _ => {}
        }
        let start = if self.at_int() {
            Some(self.int()?)
        } else {
            None
        };
        if !self.eat(':') {
            return match start {
                Some(i) => Ok(IndexItem::Int(i)),
                None => Err(self.unexpected("an index: an integer, a slice, None or '...'")),
            };
        }
        let stop = if self.at_int() {
            Some(self.int()?)
        } else {
            None
        };
        let step = if self.eat(':') && self.at_int() {
            Some(self.int()?)
        } else {
            None
        };
        Ok(IndexItem::Slice { start, stop, step })
    }
}

/// Parses EXPR text into an [`Expr`].
pub fn parse(text: &str) -> Result<Expr, LayoutError> {
    let chars: Vec<char> = text.chars().collect();
    let tokens = tokenize(&chars)?;
    let mut parser = Parser {
        chars: &chars,
        tokens,
        pos: 0,
    };
    parser.expr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_of_the_issue() {
        let e = parse(" arange( 12 ) . view( (3, 4) ).T [ ::-1, None, ..., 1:3 ]").unwrap();
        assert_eq!(e.arange, 12);
        assert_eq!(e.steps.len(), 3);
        assert_eq!(e.steps[0].text, ". view( (3, 4) )");
        assert_eq!(
            e.steps[2].kind,
            StepKind::Index(vec![
                IndexItem::Slice {
                    start: None,
                    stop: None,
                    step: Some(-1)
                },
                IndexItem::NewAxis,
                IndexItem::Ellipsis,
                IndexItem::Slice {
                    start: Some(1),
                    stop: Some(3),
                    step: None
                },
            ])
        );
        let e = parse("arange(54).view(6,9).diagonal(offset=-1, dim1=0)").unwrap();
        let StepKind::Method {
            args: Some(args), ..
        } = &e.steps[1].kind
        else {
            panic!("expected a call");
        };
        assert_eq!(args[0].keyword.as_deref(), Some("offset"));
        assert_eq!(args[0].value, Value::Int(-1));
    }

    #[test]
    fn errors_point_at_columns() {
        let cases = [
            ("", 1),
            ("arange(12", 10),
            ("arange(12).view(3,,4)", 19),
            ("arange(12)[]", 12),
            ("arange(12) x", 12),
            ("arange(-1)", 8),
            ("arange(12).view(3 4)", 19),
            ("arange(12)..T", 11),
            ("arange(12)#", 11),
        ];
        for (text, column) in cases {
            match parse(text) {
                Err(LayoutError::Parse { column: c, message }) => {
                    assert_eq!(c, column, "{text:?}: {message}")
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
        assert_eq!(
            parse("arange(99999999999999999999)").unwrap_err().kind(),
            crate::layout::ErrorKind::Overflow
        );
    }
}
