//! Tokenizer and parser of the LOOP language and of `--array` declarations.
//!
//! ```text
//! NEST   := LOOP+ STMT (";" STMT)* [";"]
//! LOOP   := "for" NAME "in" AFF ".." AFF ["step" AFF] ":"
//! STMT   := "read" REF ("," REF)* | (REF | NAME) ("=" | "+=" | "-=" | "*=" | "/=") RHS
//! REF    := NAME "[" AFF ("," AFF)* "]"
//! RHS    := sums, products and quotients of numbers, names, REFs and parenthesised RHS
//! AFF    := integer sums and products of constants and loop indices, affine (no `i*j`)
//! DECL   := NAME "=" DTYPE ( "[" AFF ("," AFF)* "]" ["ld=" AFF] | EXPR ) ["align=" AFF]
//! ```
//! Every error points at a 1-based column of the text it is in; arithmetic is checked in
//! 64 bits; parentheses nest at most [`MAX_NESTING`] deep, so no input makes the parser
//! recurse without bound.

use super::error::{LoopError, Source};
use super::{Affine, ArrayDecl, Loop, LoopNest, MAX_LOOPS, Reference, Slot, Statement};

/// Most parentheses an expression may nest.
pub const MAX_NESTING: usize = 64;

/// Words that cannot name an array, a loop index or a scalar.
const KEYWORDS: &[&str] = &["for", "in", "step", "read"];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Int(i64),
    Name(String),
    Punct(char),
    /// `..`
    Range,
    /// `=`, `+=`, `-=`, `*=`, `/=`
    Assign(&'static str),
}

#[derive(Debug, Clone)]
struct Spanned {
    token: Token,
    /// Char index where the token starts, and just past its end.
    start: usize,
    end: usize,
}

/// The tokens of `chars`; `lenient` (declarations, whose view text is `layout`'s to read)
/// makes any other character a punctuation token instead of an error.
fn tokenize(
    chars: &[char],
    source: &Source,
    input: &str,
    lenient: bool,
) -> Result<Vec<Spanned>, LoopError> {
    let error = |column: usize, message: String| LoopError::Text {
        origin: source.clone(),
        input: input.to_string(),
        column,
        message,
    };
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (c, start) = (chars[i], i);
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let next = chars.get(i + 1).copied();
        let token = if c.is_ascii_digit() {
            let mut value: i64 = 0;
            while i < chars.len() && chars[i].is_ascii_digit() {
                let digit = i64::from(chars[i] as u8 - b'0');
                value = value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(digit))
                    .ok_or_else(|| {
                        error(start + 1, "this integer does not fit in 64 bits".into())
                    })?;
                i += 1;
            }
            Token::Int(value)
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Token::Name(chars[start..i].iter().collect())
        } else if c == '.' && next == Some('.') {
            i += 2;
            Token::Range
        } else if "+-*/".contains(c) && next == Some('=') {
            i += 2;
            Token::Assign(match c {
                '+' => "+=",
                '-' => "-=",
                '*' => "*=",
                _ => "/=",
            })
        } else if c == '=' {
            i += 1;
            Token::Assign("=")
        } else if "()[],:;+-*/".contains(c) || lenient {
            i += 1;
            Token::Punct(c)
        } else {
            return Err(error(start + 1, format!("unexpected character {c:?}")));
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
    source: Source,
    input: &'a str,
    chars: Vec<char>,
    tokens: Vec<Spanned>,
    pos: usize,
    depth: usize,
}

/// Names an expression may use, and what they are.
struct Scope<'a> {
    /// Loop indices visible here (outermost first).
    loops: &'a [String],
    arrays: &'a [ArrayDecl],
}

impl<'a> Parser<'a> {
    fn new(source: Source, input: &'a str) -> Result<Self, LoopError> {
        let lenient = matches!(source, Source::Array(_));
        let chars: Vec<char> = input.chars().collect();
        let tokens = tokenize(&chars, &source, input, lenient)?;
        Ok(Parser {
            source,
            input,
            chars,
            tokens,
            pos: 0,
            depth: 0,
        })
    }

    fn error_at(&self, column: usize, message: impl Into<String>) -> LoopError {
        LoopError::Text {
            origin: self.source.clone(),
            input: self.input.to_string(),
            column,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|t| &t.token)
    }

    fn column(&self) -> usize {
        self.tokens
            .get(self.pos)
            .map_or(self.chars.len() + 1, |t| t.start + 1)
    }

    fn describe_next(&self) -> String {
        match self.peek() {
            None => "the end of the text".to_string(),
            Some(Token::Int(v)) => format!("the number {v}"),
            Some(Token::Name(n)) => format!("'{n}'"),
            Some(Token::Punct(c)) => format!("'{c}'"),
            Some(Token::Range) => "'..'".to_string(),
            Some(Token::Assign(op)) => format!("'{op}'"),
        }
    }

    fn unexpected(&self, expected: &str) -> LoopError {
        self.error_at(
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

    fn expect(&mut self, c: char) -> Result<(), LoopError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{c}'")))
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Token::Name(n)) if n == word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn name(&mut self, what: &str) -> Result<(String, usize), LoopError> {
        let column = self.column();
        match self.peek() {
            Some(Token::Name(n)) => {
                let n = n.clone();
                self.pos += 1;
                Ok((n, column))
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn text_since(&self, first: usize) -> String {
        let (start, end) = (self.tokens[first].start, self.tokens[self.pos - 1].end);
        self.chars[start..end].iter().collect()
    }

    fn nest_deeper(&mut self) -> Result<(), LoopError> {
        if self.depth >= MAX_NESTING {
            return Err(self.error_at(
                self.column(),
                format!("parentheses nested more than {MAX_NESTING} deep"),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    /// `AFF`: an affine integer expression of the loop indices in `scope`.
    fn affine(&mut self, scope: &Scope) -> Result<Affine, LoopError> {
        let mut value = self.affine_term(scope)?;
        loop {
            let column = self.column();
            let sign = if self.eat('+') {
                1
            } else if self.eat('-') {
                -1
            } else {
                return Ok(value);
            };
            let right = self.affine_term(scope)?;
            value = self.combine(&value, &right, sign, column)?;
        }
    }

    /// `left + sign·right`, checked.
    fn combine(
        &self,
        left: &Affine,
        right: &Affine,
        sign: i64,
        column: usize,
    ) -> Result<Affine, LoopError> {
        let overflow = || self.error_at(column, "this sum does not fit in 64-bit integers");
        let add = |a: i64, b: i64| b.checked_mul(sign).and_then(|b| a.checked_add(b));
        let n = left.coeffs.len().max(right.coeffs.len());
        let coeffs = (0..n)
            .map(|k| add(left.coeff(k), right.coeff(k)).ok_or_else(overflow))
            .collect::<Result<_, _>>()?;
        Ok(Affine {
            constant: add(left.constant, right.constant).ok_or_else(overflow)?,
            coeffs,
        })
    }

    fn affine_term(&mut self, scope: &Scope) -> Result<Affine, LoopError> {
        let mut value = self.affine_unary(scope)?;
        loop {
            let column = self.column();
            if self.eat('/') {
                return Err(self.error_at(column, "indices and bounds take + - * only"));
            }
            if !self.eat('*') {
                return Ok(value);
            }
            let right = self.affine_unary(scope)?;
            let (factor, other) = match (is_constant(&value), is_constant(&right)) {
                (_, true) => (right.constant, value),
                (true, false) => (value.constant, right),
                (false, false) => {
                    return Err(self.error_at(
                        column,
                        "a product of two loop indices is not affine: indices and bounds \
                         must be sums of constants times loop indices",
                    ));
                }
            };
            value = self.scale(&other, factor, column)?;
        }
    }

    fn scale(&self, value: &Affine, factor: i64, column: usize) -> Result<Affine, LoopError> {
        let overflow = || self.error_at(column, "this product does not fit in 64-bit integers");
        Ok(Affine {
            constant: value.constant.checked_mul(factor).ok_or_else(overflow)?,
            coeffs: value
                .coeffs
                .iter()
                .map(|c| c.checked_mul(factor).ok_or_else(overflow))
                .collect::<Result<_, _>>()?,
        })
    }

    fn affine_unary(&mut self, scope: &Scope) -> Result<Affine, LoopError> {
        let column = self.column();
        if self.eat('-') {
            let value = self.affine_unary(scope)?;
            return self.scale(&value, -1, column);
        }
        if self.eat('+') {
            return self.affine_unary(scope);
        }
        match self.peek().cloned() {
            Some(Token::Int(v)) => {
                self.pos += 1;
                Ok(Affine {
                    constant: v,
                    coeffs: Vec::new(),
                })
            }
            Some(Token::Name(name)) => {
                self.pos += 1;
                match scope.loops.iter().position(|l| *l == name) {
                    Some(k) => {
                        let mut coeffs = vec![0; k + 1];
                        coeffs[k] = 1;
                        Ok(Affine {
                            constant: 0,
                            coeffs,
                        })
                    }
                    None => Err(self.error_at(column, unknown_index(&name, scope))),
                }
            }
            Some(Token::Punct('(')) => {
                self.nest_deeper()?;
                self.pos += 1;
                let value = self.affine(scope)?;
                self.expect(')')?;
                self.depth -= 1;
                Ok(value)
            }
            _ => Err(self.unexpected("an integer or a loop index")),
        }
    }

    /// An `AFF` that must be a constant (a size, a step, an alignment).
    fn constant(&mut self, what: &str) -> Result<(i64, usize), LoopError> {
        let column = self.column();
        let scope = Scope {
            loops: &[],
            arrays: &[],
        };
        let value = self.affine(&scope).map_err(|e| match e {
            LoopError::Text { column: c, .. } if c == column => {
                self.error_at(column, format!("expected {what} (an integer)"))
            }
            other => other,
        })?;
        Ok((value.constant, column))
    }

    /// `NAME[AFF, …]` after its name: checks the array and its arity.
    fn reference_rest(
        &mut self,
        name: &str,
        column: usize,
        scope: &Scope,
        statement: usize,
    ) -> Result<Reference, LoopError> {
        let array = scope
            .arrays
            .iter()
            .position(|a| a.name == name)
            .ok_or_else(|| self.error_at(column, unknown_array(name, scope)))?;
        self.expect('[')?;
        let mut indices = Vec::new();
        let mut texts = Vec::new();
        loop {
            let first = self.pos;
            indices.push(self.affine(scope)?);
            texts.push(
                self.text_since(first)
                    .split_whitespace()
                    .collect::<String>(),
            );
            if !self.eat(',') {
                break;
            }
        }
        self.expect(']')?;
        let dims = scope.arrays[array].shape.len();
        if indices.len() != dims {
            return Err(self.error_at(
                column,
                format!(
                    "{name} has {dims} dims (shape {:?}) but is indexed with {}",
                    scope.arrays[array].shape,
                    indices.len()
                ),
            ));
        }
        Ok(Reference {
            array,
            indices,
            text: format!("{name}[{}]", texts.join(", ")),
            statement,
        })
    }

    /// `RHS`: returns its array references, left to right.
    fn rhs(&mut self, scope: &Scope, statement: usize) -> Result<Vec<Reference>, LoopError> {
        let mut refs = Vec::new();
        self.rhs_sum(scope, statement, &mut refs)?;
        Ok(refs)
    }

    fn rhs_sum(
        &mut self,
        scope: &Scope,
        st: usize,
        refs: &mut Vec<Reference>,
    ) -> Result<(), LoopError> {
        self.rhs_product(scope, st, refs)?;
        while self.eat('+') || self.eat('-') {
            self.rhs_product(scope, st, refs)?;
        }
        Ok(())
    }

    fn rhs_product(
        &mut self,
        scope: &Scope,
        st: usize,
        refs: &mut Vec<Reference>,
    ) -> Result<(), LoopError> {
        self.rhs_unary(scope, st, refs)?;
        while self.eat('*') || self.eat('/') {
            self.rhs_unary(scope, st, refs)?;
        }
        Ok(())
    }

    fn rhs_unary(
        &mut self,
        scope: &Scope,
        st: usize,
        refs: &mut Vec<Reference>,
    ) -> Result<(), LoopError> {
        while self.eat('-') || self.eat('+') {}
        match self.peek().cloned() {
            Some(Token::Int(_)) => {
                self.pos += 1;
                Ok(())
            }
            Some(Token::Name(name)) => {
                let column = self.column();
                self.pos += 1;
                if self.peek() == Some(&Token::Punct('[')) {
                    refs.push(self.reference_rest(&name, column, scope, st)?);
                } else {
                    self.check_scalar(&name, column, scope)?;
                }
                Ok(())
            }
            Some(Token::Punct('(')) => {
                self.nest_deeper()?;
                self.pos += 1;
                self.rhs_sum(scope, st, refs)?;
                self.expect(')')?;
                self.depth -= 1;
                Ok(())
            }
            _ => Err(self.unexpected("a number, a name or an array reference")),
        }
    }

    /// A bare name used as a value or a target: a loop index or a scalar, never an array.
    fn check_scalar(&self, name: &str, column: usize, scope: &Scope) -> Result<(), LoopError> {
        if let Some(array) = scope.arrays.iter().find(|a| a.name == name) {
            return Err(self.error_at(
                column,
                format!(
                    "{name} is an array: index it ({name}[…] with {} indices)",
                    array.shape.len()
                ),
            ));
        }
        if KEYWORDS.contains(&name) {
            return Err(self.error_at(column, format!("'{name}' is a keyword")));
        }
        Ok(())
    }

    /// One statement: its references and the slots they take, in order.
    fn statement(
        &mut self,
        scope: &Scope,
        index: usize,
        references: &mut Vec<Reference>,
        slots: &mut Vec<Slot>,
    ) -> Result<(), LoopError> {
        let mut push = |reference: Reference, kinds: &[bool], refs: &mut Vec<Reference>| {
            let id = refs.len();
            refs.push(reference);
            for &is_store in kinds {
                slots.push(Slot {
                    reference: id,
                    is_store,
                });
            }
        };
        if self.eat_word("read") {
            loop {
                let (name, column) = self.name("an array reference")?;
                let reference = self.reference_rest(&name, column, scope, index)?;
                push(reference, &[false], references);
                if !self.eat(',') {
                    return Ok(());
                }
            }
        }
        let (name, column) = self.name("a statement: `a[i] = …`, `s += …` or `read a[i]`")?;
        let target = if self.peek() == Some(&Token::Punct('[')) {
            Some(self.reference_rest(&name, column, scope, index)?)
        } else {
            if scope.loops.contains(&name) {
                return Err(self.error_at(
                    column,
                    format!("'{name}' is a loop index: it cannot be assigned"),
                ));
            }
            self.check_scalar(&name, column, scope)?;
            None
        };
        let op = match self.peek() {
            Some(Token::Assign(op)) => *op,
            _ => return Err(self.unexpected("'=', '+=', '-=', '*=' or '/='")),
        };
        self.pos += 1;
        for reference in self.rhs(scope, index)? {
            push(reference, &[false], references);
        }
        if let Some(target) = target {
            let kinds: &[bool] = if op == "=" { &[true] } else { &[false, true] };
            push(target, kinds, references);
        }
        Ok(())
    }
}

fn is_constant(value: &Affine) -> bool {
    value.coeffs.iter().all(|&c| c == 0)
}

fn unknown_index(name: &str, scope: &Scope) -> String {
    if scope.arrays.iter().any(|a| a.name == name) {
        format!("{name} is an array, not a loop index")
    } else if scope.loops.is_empty() {
        format!("unknown name '{name}': no loop index is visible here (only integers)")
    } else {
        format!(
            "unknown loop index '{name}' (visible here: {})",
            scope.loops.join(", ")
        )
    }
}

fn unknown_array(name: &str, scope: &Scope) -> String {
    let known: Vec<&str> = scope.arrays.iter().map(|a| a.name.as_str()).collect();
    if known.is_empty() {
        format!("unknown array '{name}': declare it with --array '{name} = f64[…]'")
    } else {
        format!(
            "unknown array '{name}' (declared: {}); declare it with --array '{name} = f64[…]'",
            known.join(", ")
        )
    }
}

/// Parses the nest `text` over the declarations `arrays` (in order).
pub fn parse_nest(text: &str, arrays: &[String]) -> Result<LoopNest, LoopError> {
    let mut decls: Vec<ArrayDecl> = Vec::new();
    for (k, decl) in arrays.iter().enumerate() {
        let array = parse_array(decl, k)?;
        if decls.iter().any(|d| d.name == array.name) {
            return Err(LoopError::Declaration {
                array: array.name,
                message: "declared twice".to_string(),
            });
        }
        decls.push(array);
    }
    let mut p = Parser::new(Source::Loop, text)?;
    let mut loops: Vec<Loop> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    while p.eat_word("for") {
        let (var, column) = p.name("a loop index name")?;
        if names.contains(&var)
            || KEYWORDS.contains(&var.as_str())
            || decls.iter().any(|a| a.name == var)
        {
            return Err(p.error_at(
                column,
                format!("'{var}' is already a name here: pick another loop index"),
            ));
        }
        if loops.len() == MAX_LOOPS {
            return Err(p.error_at(column, format!("a nest has at most {MAX_LOOPS} loops")));
        }
        if !p.eat_word("in") {
            return Err(p.unexpected("'in'"));
        }
        let scope = Scope {
            loops: &names,
            arrays: &decls,
        };
        let lower = p.affine(&scope)?;
        if p.peek() != Some(&Token::Range) {
            return Err(p.unexpected("'..' (a range: lo..hi)"));
        }
        p.pos += 1;
        let upper = p.affine(&scope)?;
        let step = if p.eat_word("step") {
            let (step, column) = p.constant("a step")?;
            if step <= 0 {
                return Err(p.error_at(column, format!("the step must be positive, got {step}")));
            }
            step
        } else {
            1
        };
        p.expect(':')?;
        names.push(var.clone());
        loops.push(Loop {
            var,
            lower,
            upper,
            step,
        });
    }
    if loops.is_empty() {
        return Err(p.unexpected("a loop: `for i in 0..n:`"));
    }
    let scope = Scope {
        loops: &names,
        arrays: &decls,
    };
    let (mut references, mut slots, mut statements) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        let first = p.pos;
        if first >= p.tokens.len() {
            if statements.is_empty() {
                return Err(p.unexpected("a statement after the last loop's ':'"));
            }
            break;
        }
        p.statement(&scope, statements.len(), &mut references, &mut slots)?;
        statements.push(Statement {
            text: p.text_since(first),
        });
        if !p.eat(';') {
            if p.pos < p.tokens.len() {
                return Err(p.unexpected("';' between statements, or the end"));
            }
            break;
        }
    }
    let n = loops.len();
    for l in &mut loops {
        l.lower.coeffs.resize(n, 0);
        l.upper.coeffs.resize(n, 0);
    }
    for r in &mut references {
        for index in &mut r.indices {
            index.coeffs.resize(n, 0);
        }
    }
    Ok(LoopNest {
        arrays: decls,
        loops,
        statements,
        references,
        slots,
        text: text.to_string(),
    })
}

mod declare;
pub use declare::parse_array;

#[cfg(test)]
mod tests;
