//! `--array` declarations: `name = dtype[dims] [ld=N] [align=N]`, or `name = dtype EXPR
//! [align=N]` with the view read by `layout`'s evaluator (its errors' columns moved into the
//! declaration's text).

use super::{KEYWORDS, Parser, Token};
use crate::layout::MAX_DIMS;
use crate::layout::expr::evaluate_layout;
use crate::layout::loops::error::{LoopError, Source};
use crate::layout::loops::{ArrayDecl, DEFAULT_ALIGN, DTYPES, Declared, shape_strides};

/// Parses declaration number `k` (0-based): `name = dtype[dims] [ld=N] [align=N]` or
/// `name = dtype EXPR [align=N]`.
pub fn parse_array(text: &str, k: usize) -> Result<ArrayDecl, LoopError> {
    let source = Source::Array(k);
    // A trailing `align=N` is cut off first, so that a view's EXPR never sees it.
    let (body, align_text) = match text.rfind("align") {
        Some(at)
            if at > 0
                && text[at..]
                    .trim_start_matches("align")
                    .trim_start()
                    .starts_with('=') =>
        {
            (&text[..at], Some(at))
        }
        _ => (text, None),
    };
    let mut p = Parser::new(source.clone(), text)?;
    // Tokens past the body belong to `align=`.
    let body_chars = body.chars().count();
    let body_tokens = p.tokens.iter().take_while(|t| t.start < body_chars).count();
    let (name, column) = p.name("an array name: `a = f64[1024, 1024]`")?;
    if KEYWORDS.contains(&name.as_str()) {
        return Err(p.error_at(column, format!("'{name}' is a keyword")));
    }
    if p.peek() != Some(&Token::Assign("=")) {
        return Err(p.unexpected("'=' after the array's name"));
    }
    p.pos += 1;
    let (dtype_name, dtype_column) = p.name("an element type (f64, f32, …)")?;
    let &(dtype, itemsize) = DTYPES
        .iter()
        .find(|(n, _)| *n == dtype_name.to_ascii_lowercase())
        .ok_or_else(|| {
            let names: Vec<&str> = DTYPES.iter().map(|(n, _)| *n).collect();
            p.error_at(
                dtype_column,
                format!(
                    "unknown element type '{dtype_name}'; known: {}",
                    names.join(", ")
                ),
            )
        })?;
    let (shape, strides, offset, storage_len, declared);
    if p.eat('[') {
        let mut dims = Vec::new();
        loop {
            let (dim, column) = p.constant("a dim size")?;
            if dim <= 0 {
                return Err(p.error_at(column, format!("a dim size must be positive, got {dim}")));
            }
            dims.push(dim as usize);
            if !p.eat(',') {
                break;
            }
        }
        p.expect(']')?;
        if dims.len() > MAX_DIMS {
            return Err(p.error_at(column, format!("an array has at most {MAX_DIMS} dims")));
        }
        let ld = if p.pos < body_tokens && p.eat_word("ld") {
            if p.peek() != Some(&Token::Assign("=")) {
                return Err(p.unexpected("'=' after ld"));
            }
            p.pos += 1;
            let (ld, column) = p.constant("the leading dimension")?;
            if dims.len() < 2 {
                return Err(p.error_at(column, "ld= needs two or more dims"));
            }
            Some(usize::try_from(ld).map_err(|_| p.error_at(column, "ld must be positive"))?)
        } else {
            None
        };
        if p.pos < body_tokens {
            return Err(p.unexpected("`ld=N`, `align=N` or the end of the declaration"));
        }
        (strides, storage_len) = shape_strides(&name, &dims, ld)?;
        shape = dims;
        offset = 0;
        declared = Declared::Shape { ld };
    } else {
        let Some(first) = p.tokens.get(p.pos).filter(|_| p.pos < body_tokens) else {
            return Err(p.unexpected("'[' (a shape) or a view expression `arange(N)…`"));
        };
        let start = first.start;
        let expr: String = p.chars[start..body_chars].iter().collect();
        let (layout, len) = evaluate_layout(&expr).map_err(|e| match e.column() {
            Some(c) => p.error_at(start + c, root_message(&e)),
            None => LoopError::Declaration {
                array: name.clone(),
                message: e.to_string(),
            },
        })?;
        shape = layout.shape().to_vec();
        strides = layout.strides().iter().map(|&s| s as i64).collect();
        offset = layout.offset();
        storage_len = len;
        declared = Declared::View {
            expr: expr.trim().to_string(),
        };
        p.pos = body_tokens;
    }
    let align = match align_text {
        None => DEFAULT_ALIGN,
        Some(_) => {
            p.pos = body_tokens + 1; // past `align`
            if p.peek() != Some(&Token::Assign("=")) {
                return Err(p.unexpected("'=' after align"));
            }
            p.pos += 1;
            let (align, column) = p.constant("an alignment in bytes")?;
            if align <= 0 || !(align as u64).is_power_of_two() || align > 1 << 30 {
                return Err(p.error_at(
                    column,
                    format!("align must be a power of two up to 1 GiB, got {align}"),
                ));
            }
            if p.pos < p.tokens.len() {
                return Err(p.unexpected("the end of the declaration"));
            }
            align as u64
        }
    };
    Ok(ArrayDecl {
        name,
        dtype,
        itemsize,
        shape,
        strides,
        offset,
        storage_len,
        align,
        declared,
        text: text.trim().to_string(),
    })
}

/// A layout error's message without its own "at column N" (the caret shows it).
fn root_message(error: &crate::layout::LayoutError) -> String {
    use crate::layout::LayoutError;
    match error.root() {
        LayoutError::Parse { message, .. } | LayoutError::Arithmetic { message, .. } => {
            message.clone()
        }
        other => other.to_string(),
    }
}
