//! Tokenizer and parser of the EXPR language.
//!
//! ```text
//! EXPR    := "arange" "(" INT ")" POSTFIX*
//! POSTFIX := "." NAME [ "(" [ARG ("," ARG)* [","]] ")" ] | "[" ITEM ("," ITEM)* [","] "]"
//! ARG     := VALUE | NAME "=" VALUE
//! VALUE   := INT | "None" | "(" [INT ("," INT)* [","]] ")" | "[" [INT ("," INT)* [","]] "]"
//! ITEM    := INT | [INT] ":" [INT] [":" [INT]] | "None" | "..."
//! INT     := TERM (("+" | "-") TERM)*
//! TERM    := UNARY (("*" | "//") UNARY)*
//! UNARY   := ("-" | "+") UNARY | DIGITS | "(" INT ")"
//! ```
//! Integers are Python's: `32*64*56*56`, `(1024+8)*8`, `-(4//3)`, with `//` rounding toward
//! minus infinity. A parenthesised integer is an integer, as in Python: `(12)` is 12 and
//! `(12,)` a tuple (each is accepted wherever the other is, so only the meaning is Python's).
//! Arithmetic is checked in 64-bit integers: an overflow (kind `overflow`) or a division by
//! zero (kind `invalid_argument`) names the column of its operator. Whitespace is allowed
//! between any two tokens. The parser never panics: every malformed input becomes a `parse`
//! (or `overflow`, for huge literals) error with a 1-based column.

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
    /// `//`, integer division.
    FloorDiv,
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
        } else if c == '/' {
            if chars.get(i + 1) != Some(&'/') {
                return Err(parse_error(
                    start + 1,
                    "'/' is not integer division: write '//' (sizes are integers)",
                ));
            }
            i += 2;
            Token::FloorDiv
        } else if "()[],:.=-+*".contains(c) {
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

/// A binary operator of `INT`.
#[derive(Debug, Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    FloorDiv,
}

impl Op {
    /// `left op right` in checked 64-bit arithmetic; `column` is the operator's, for errors.
    fn apply(self, left: i64, right: i64, column: usize) -> Result<i64, LayoutError> {
        let (result, symbol) = match self {
            Op::Add => (left.checked_add(right), "+"),
            Op::Sub => (left.checked_sub(right), "-"),
            Op::Mul => (left.checked_mul(right), "*"),
            Op::FloorDiv if right == 0 => {
                return Err(LayoutError::Arithmetic {
                    column,
                    overflow: false,
                    message: format!("{left} // 0 divides by zero"),
                });
            }
            Op::FloorDiv => (floor_div(left, right), "//"),
        };
        result.ok_or_else(|| arithmetic_overflow(column, format!("{left} {symbol} {right}")))
    }
}

/// Python's `//`: the quotient rounded toward minus infinity; `None` on overflow
/// (`i64::MIN // -1`). `right` is not zero.
fn floor_div(left: i64, right: i64) -> Option<i64> {
    let quotient = left.checked_div(right)?;
    let inexact = left % right != 0;
    Some(if inexact && ((left < 0) != (right < 0)) {
        quotient - 1
    } else {
        quotient
    })
}

fn arithmetic_overflow(column: usize, what: String) -> LayoutError {
    LayoutError::Arithmetic {
        column,
        overflow: true,
        message: format!("{what} does not fit in 64-bit integers"),
    }
}

/// Most parentheses one integer may nest: the parser recurses once per level.
const MAX_NESTING: usize = 64;

struct Parser<'a> {
    chars: &'a [char],
    tokens: Vec<Spanned>,
    pos: usize,
    /// Parentheses of an integer open at this point.
    depth: usize,
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
            Some(Token::FloorDiv) => "'//'".to_string(),
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

    /// Whether an integer (a literal, a sign or a parenthesised integer) starts here.
    fn at_int(&self) -> bool {
        matches!(
            self.peek(),
            Some(Token::Int(_) | Token::Punct('-' | '+' | '('))
        )
    }

    /// `INT`: sums of products of signed literals and parenthesised integers, checked.
    fn int(&mut self) -> Result<i64, LayoutError> {
        let mut value = self.term()?;
        loop {
            let column = self.column();
            let op = if self.eat('+') {
                Op::Add
            } else if self.eat('-') {
                Op::Sub
            } else {
                return Ok(value);
            };
            let right = self.term()?;
            value = op.apply(value, right, column)?;
        }
    }

    fn term(&mut self) -> Result<i64, LayoutError> {
        let mut value = self.unary()?;
        loop {
            let column = self.column();
            let op = if self.eat('*') {
                Op::Mul
            } else if self.peek() == Some(&Token::FloorDiv) {
                self.pos += 1;
                Op::FloorDiv
            } else {
                return Ok(value);
            };
            let right = self.unary()?;
            value = op.apply(value, right, column)?;
        }
    }

    fn unary(&mut self) -> Result<i64, LayoutError> {
        // Signs are read in a loop: a long run of them must not deepen the stack.
        let mut negations = Vec::new();
        loop {
            let column = self.column();
            if self.eat('-') {
                negations.push(column);
            } else if !self.eat('+') {
                break;
            }
        }
        let mut value = self.atom()?;
        for column in negations.into_iter().rev() {
            value = value
                .checked_neg()
                .ok_or_else(|| arithmetic_overflow(column, format!("-({value})")))?;
        }
        Ok(value)
    }

    /// A literal or a parenthesised `INT`, nested at most [`MAX_NESTING`] deep.
    fn atom(&mut self) -> Result<i64, LayoutError> {
        match self.peek() {
            Some(&Token::Int(v)) => {
                self.pos += 1;
                Ok(v)
            }
            Some(Token::Punct('(')) => {
                if self.depth >= MAX_NESTING {
                    return Err(parse_error(
                        self.column(),
                        format!("parentheses nested more than {MAX_NESTING} deep"),
                    ));
                }
                self.depth += 1;
                self.pos += 1;
                let value = self.int()?;
                self.expect(')')?;
                self.depth -= 1;
                Ok(value)
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
            Some(Token::Punct('(')) => self.parenthesised(),
            Some(Token::Punct('[')) => {
                self.pos += 1;
                self.tuple_rest(']', Vec::new())
            }
            _ if self.at_int() => Ok(Value::Int(self.int()?)),
            _ => Err(self.unexpected("an integer, a tuple like (3, 4), or None")),
        }
    }

    /// A value opening with `(`: `()` and `(a, …)` are tuples; `(a)` is the integer a, which
    /// an operator may continue (`(1024+8)*8`), as in Python.
    fn parenthesised(&mut self) -> Result<Value, LayoutError> {
        let open = self.pos;
        self.pos += 1;
        if self.eat(')') {
            return Ok(Value::Tuple(Vec::new()));
        }
        let first = self.int()?;
        if self.peek() == Some(&Token::Punct(')')) {
            self.pos = open;
            return Ok(Value::Int(self.int()?));
        }
        self.expect(',')?;
        self.tuple_rest(')', vec![first])
    }

    /// The rest of a tuple after its opening bracket (and any `values` already read).
    fn tuple_rest(&mut self, close: char, mut values: Vec<i64>) -> Result<Value, LayoutError> {
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
        depth: 0,
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

    /// The integer an `arange(…)` argument evaluates to, or its error's kind and column.
    fn size_of(text: &str) -> Result<usize, (crate::layout::ErrorKind, Option<usize>)> {
        parse(&format!("arange({text})"))
            .map(|e| e.arange)
            .map_err(|e| (e.kind(), e.column()))
    }

    #[test]
    fn integers_are_python_arithmetic() {
        // (text inside arange(…), value)
        let table: [(&str, usize); 12] = [
            ("32*64*56*56", 6_422_528),
            ("1024*1032", 1_056_768),
            ("2+3*4", 14),
            ("(2+3)*4", 20),
            ("10-4-3", 3),
            ("2*3//4", 1),
            ("7//2", 3),
            ("-7//2 + 10", 6),
            ("7//-2 + 10", 6),
            ("--4", 4),
            ("+4 - -4", 8),
            (" ( ( 1 ) ) ", 1),
        ];
        for (text, value) in table {
            assert_eq!(size_of(text), Ok(value), "{text}");
        }
        assert_eq!(floor_div(-8, 2), Some(-4));
        assert_eq!(floor_div(-9, 2), Some(-5));
        assert_eq!(floor_div(9, -2), Some(-5));
        assert_eq!(floor_div(-9, -2), Some(4));
        assert_eq!(floor_div(i64::MIN, -1), None);
    }

    #[test]
    fn arithmetic_errors_point_at_their_operator() {
        use crate::layout::ErrorKind::{InvalidArgument, Overflow, Parse};
        // (text inside arange(…), kind, column in `arange(…)`)
        let table: [(&str, crate::layout::ErrorKind, usize); 8] = [
            ("4294967296*4294967296", Overflow, 18),
            ("1 + 9223372036854775807", Overflow, 10),
            ("-(-9223372036854775807-1)", Overflow, 8),
            ("1//0", InvalidArgument, 9),
            ("6/2", Parse, 9),
            ("2*", Parse, 10),
            ("(2+3", Parse, 13),
            ("2**3", Parse, 10),
        ];
        for (text, kind, column) in table {
            assert_eq!(size_of(text), Err((kind, Some(column))), "{text}");
        }
        // Deep nesting is refused at the first parenthesis too many; long sign runs are fine.
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(size_of(&deep), Err((Parse, Some(8 + MAX_NESTING))));
        assert_eq!(size_of(&format!("{}5", "-".repeat(100_000))), Ok(5));
        let message = parse("arange(4294967296*4294967296)")
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "arithmetic overflow at column 18: 4294967296 * 4294967296 does not fit in 64-bit \
             integers"
        );
    }

    #[test]
    fn arithmetic_works_in_every_integer_place() {
        let e = parse(
            "arange(4*6).view(2*2, (1+1)*3)[1:2*2, ::-(1)].narrow(0, 1-1, 3//2)\
             .as_strided((2*1,), (4-1,), 2+0).view((2))",
        )
        .unwrap();
        let kinds: Vec<&StepKind> = e.steps.iter().map(|s| &s.kind).collect();
        let args = |k: usize| -> Vec<Value> {
            match kinds[k] {
                StepKind::Method { args: Some(a), .. } => {
                    a.iter().map(|a| a.value.clone()).collect()
                }
                other => panic!("{other:?}"),
            }
        };
        let values: Vec<Value> = args(0);
        assert_eq!(values, [Value::Int(4), Value::Int(6)]);
        assert_eq!(
            kinds[1],
            &StepKind::Index(vec![
                IndexItem::Slice {
                    start: Some(1),
                    stop: Some(4),
                    step: None
                },
                IndexItem::Slice {
                    start: None,
                    stop: None,
                    step: Some(-1)
                },
            ])
        );
        assert_eq!(args(2), [Value::Int(0), Value::Int(0), Value::Int(1)]);
        assert_eq!(
            args(3),
            [Value::Tuple(vec![2]), Value::Tuple(vec![3]), Value::Int(2)]
        );
        // `(2)` is the integer 2, as in Python; `()` and `(2,)` are tuples.
        assert_eq!(args(4), [Value::Int(2)]);
        let e = parse("arange(4).view((), (2,), [1+1])").unwrap();
        let StepKind::Method { args: Some(a), .. } = &e.steps[0].kind else {
            panic!("a call");
        };
        let values: Vec<&Value> = a.iter().map(|a| &a.value).collect();
        assert_eq!(
            values,
            [
                &Value::Tuple(vec![]),
                &Value::Tuple(vec![2]),
                &Value::Tuple(vec![2])
            ]
        );
    }
}
