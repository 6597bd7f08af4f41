//! The EXPR language of `stridelab layout`: `arange(N)` followed by view ops, e.g.
//! `arange(12).view(3,4).T[::-1, 1:]`. Parsing lives in `parse`; this file binds
//! arguments and runs the steps on any [`ViewSubject`]: the layout-only [`LayoutView`] here
//! ([`evaluate_layout`]), or a tensor with values on the kernels floor, where copies run.

pub mod parse;
pub mod replay;

use super::error::LayoutError;
use super::reshape::infer_shape;
use super::strided::Layout;
use parse::{Arg, Expr, StepKind, Value};

/// Largest storage (and largest copy / view) the value-bearing evaluator materialises: 16 Mi
/// elements.
pub const MAX_VALUE_ELEMENTS: usize = 1 << 24;
/// Largest storage and copy [`evaluate_layout`] accepts: it stores no values, but a copy
/// still counts every element against the copy budget.
pub const MAX_LAYOUT_ONLY_ELEMENTS: usize = 1 << 30;

/// Elements all the copies of one expression may move together, as a multiple of the
/// single-copy limit (at most 2^30): each copy is checked against what is left before it runs,
/// so `.clone()` two hundred times is refused instead of taking half a minute.
const COPY_WORK_FACTOR: usize = 4;

/// The copy work one expression may do when single copies are limited to `max_elements`.
fn copy_budget(max_elements: usize) -> usize {
    max_elements.saturating_mul(COPY_WORK_FACTOR).min(1 << 30)
}

/// What the steps of an expression act on: a layout over some storage. Views keep the
/// storage; copies make a fresh C-contiguous one (how is the subject's business).
pub trait ViewSubject: Clone {
    type Error: From<LayoutError>;
    fn layout(&self) -> &Layout;
    /// False for views that may alias storage cells, and anything derived from them.
    fn writable(&self) -> bool;
    /// The same storage seen through `layout`.
    fn with_layout(&self, layout: Layout) -> Self;
    /// A fresh C-contiguous storage holding the view's elements.
    fn copy_to_contiguous(&self) -> Result<Self, Self::Error>;
    fn shares_storage_with(&self, other: &Self) -> bool;
    /// Attaches the text (and column, for argument errors) of the expression step that failed.
    fn in_step(error: Self::Error, op: String, column: usize) -> Self::Error;
}

/// A view when possible, else a C-contiguous copy with the new shape.
pub fn reshape<S: ViewSubject>(subject: &S, shape: &[i64]) -> Result<S, S::Error> {
    // Reject a bad shape before deciding whether to copy.
    infer_shape(shape, subject.layout().numel())?;
    match subject.layout().view(shape) {
        Ok(layout) => Ok(subject.with_layout(layout)),
        Err(LayoutError::ViewIncompatible(_)) => {
            let copy = subject.copy_to_contiguous()?;
            Ok(copy.with_layout(copy.layout().view(shape)?))
        }
        Err(other) => Err(other.into()),
    }
}

/// Merges dims `start_dim..=end_dim` into one (PyTorch `flatten`): a view when possible.
pub fn flatten<S: ViewSubject>(subject: &S, start_dim: i64, end_dim: i64) -> Result<S, S::Error> {
    let layout = subject.layout();
    if layout.ndim() == 0 {
        return reshape(subject, &[1]);
    }
    let ndim = layout.ndim();
    let start = super::ops::normalize_dim(start_dim, ndim)?;
    let end = super::ops::normalize_dim(end_dim, ndim)?;
    if start > end {
        return Err(LayoutError::InvalidDims(format!(
            "flatten: start_dim {start_dim} comes after end_dim {end_dim}"
        ))
        .into());
    }
    if start == end {
        return Ok(subject.clone());
    }
    let shape = layout.shape();
    let merged = shape[start..=end]
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| LayoutError::overflow("the size of the flattened dim"))?;
    let new_shape: Vec<i64> = shape[..start]
        .iter()
        .copied()
        .chain(std::iter::once(merged))
        .chain(shape[end + 1..].iter().copied())
        .map(|n| n as i64)
        .collect();
    reshape(subject, &new_shape)
}

/// The same subject if already C-contiguous, else a contiguous copy.
pub fn contiguous<S: ViewSubject>(subject: &S) -> Result<S, S::Error> {
    if subject.layout().is_c_contiguous() {
        Ok(subject.clone())
    } else {
        subject.copy_to_contiguous()
    }
}

/// A layout with no values behind it: copies only make a fresh contiguous layout.
#[derive(Debug, Clone)]
pub struct LayoutView {
    layout: Layout,
    writable: bool,
    /// Which storage the view indexes: 0 for `arange(N)`, one more per copy along the chain.
    storage: u64,
}

impl LayoutView {
    /// The view of a whole storage of `layout.storage_len()` elements.
    pub fn new(layout: Layout) -> LayoutView {
        let writable = layout.is_non_overlapping();
        LayoutView {
            layout,
            writable,
            storage: 0,
        }
    }
}

impl ViewSubject for LayoutView {
    type Error = LayoutError;

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn writable(&self) -> bool {
        self.writable
    }

    fn with_layout(&self, layout: Layout) -> LayoutView {
        LayoutView {
            writable: self.writable && layout.is_non_overlapping(),
            layout,
            storage: self.storage,
        }
    }

    fn copy_to_contiguous(&self) -> Result<LayoutView, LayoutError> {
        let layout = Layout::contiguous(self.layout.shape())?;
        Ok(LayoutView {
            storage: self.storage + 1,
            ..LayoutView::new(layout)
        })
    }

    fn shares_storage_with(&self, other: &LayoutView) -> bool {
        self.storage == other.storage
    }

    fn in_step(error: LayoutError, op: String, column: usize) -> LayoutError {
        error.in_step(op, column)
    }
}

/// One evaluated step: its source text, the layout after it, and whether it copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepResult {
    pub text: String,
    pub layout: Layout,
    pub copied: bool,
    pub writable: bool,
}

/// Parses `text`, refusing an `arange(N)` storage larger than `max_elements` (`too_large`).
pub fn parse_bounded(text: &str, max_elements: usize) -> Result<Expr, LayoutError> {
    let expr = parse::parse(text)?;
    if expr.arange > max_elements {
        return Err(LayoutError::TooLarge {
            what: "a storage",
            len: expr.arange as u128,
            max: max_elements,
        });
    }
    Ok(expr)
}

/// Runs the postfix steps of `expr` on `base` (the `arange(N)` view): returns one
/// [`StepResult`] per step (`arange(N)` first) and the final subject. Copies larger than
/// `max_elements`, or beyond the expression's copy budget, are refused with `too_large`.
pub fn run_steps<S: ViewSubject>(
    expr: &Expr,
    base: S,
    max_elements: usize,
) -> Result<(Vec<StepResult>, S), S::Error> {
    let mut steps = vec![StepResult {
        text: format!("arange({})", expr.arange),
        layout: base.layout().clone(),
        copied: false,
        writable: base.writable(),
    }];
    let mut subject = base;
    let budget = copy_budget(max_elements);
    let mut copy_left = budget;
    for step in &expr.steps {
        let limits = CopyLimits {
            single: max_elements,
            left: copy_left,
            budget,
        };
        let next = apply_step(&subject, &step.kind, limits)
            .map_err(|e| S::in_step(e, step.text.trim().to_string(), step.column))?;
        let copied = !next.shares_storage_with(&subject);
        if copied {
            copy_left = copy_left.saturating_sub(subject.layout().numel());
        }
        steps.push(StepResult {
            text: step.text.trim().to_string(),
            layout: next.layout().clone(),
            copied,
            writable: next.writable(),
        });
        subject = next;
    }
    Ok((steps, subject))
}

/// The final layout and its storage length, without materialising storage values (storages
/// and copies up to [`MAX_LAYOUT_ONLY_ELEMENTS`]). For kernels that build their own storage.
pub fn evaluate_layout(text: &str) -> Result<(Layout, usize), LayoutError> {
    let expr = parse_bounded(text, MAX_LAYOUT_ONLY_ELEMENTS)?;
    let base = LayoutView::new(Layout::contiguous(&[expr.arange])?);
    let (_, last) = run_steps(&expr, base, MAX_LAYOUT_ONLY_ELEMENTS)?;
    let storage_len = last.layout.storage_len();
    Ok((last.layout, storage_len))
}

/// The methods the language knows, for "unknown method" messages.
pub const METHODS: &[&str] = &[
    "T",
    "t()",
    "transpose(dim0, dim1)",
    "permute(*dims)",
    "select(dim, index)",
    "narrow(dim, start, length)",
    "diagonal(offset=0, dim1=0, dim2=1)",
    "squeeze(dim=None)",
    "unsqueeze(dim)",
    "expand(*sizes)",
    "flip(*dims)",
    "as_strided(size, stride, storage_offset=None)",
    "view(*shape)",
    "reshape(*shape)",
    "flatten(start_dim=0, end_dim=-1)",
    "contiguous()",
    "clone()",
];

/// An argument error; [`run_steps`] fills in the column of the step it belongs to.
fn arg_error(message: impl Into<String>) -> LayoutError {
    LayoutError::Parse {
        column: 0,
        message: message.into(),
    }
}

/// Binds call arguments to named parameters (positional first, then keywords).
fn bind<'a>(
    method: &str,
    args: &'a [Arg],
    params: &[&str],
) -> Result<Vec<Option<&'a Value>>, LayoutError> {
    let mut bound: Vec<Option<&Value>> = vec![None; params.len()];
    let mut seen_keyword = false;
    for (k, arg) in args.iter().enumerate() {
        let slot = match &arg.keyword {
            None => {
                if seen_keyword {
                    return Err(arg_error(format!(
                        "{method}(): a positional argument follows a keyword argument"
                    )));
                }
                if k >= params.len() {
                    return Err(arg_error(format!(
                        "{method}() takes at most {} arguments, got {}",
                        params.len(),
                        args.len()
                    )));
                }
                k
            }
            Some(name) => {
                seen_keyword = true;
                params.iter().position(|p| p == name).ok_or_else(|| {
                    arg_error(format!(
                        "{method}() has no argument named '{name}' (it takes {})",
                        if params.is_empty() {
                            "none".to_string()
                        } else {
                            params.join(", ")
                        }
                    ))
                })?
            }
        };
        if bound[slot].replace(&arg.value).is_some() {
            return Err(arg_error(format!(
                "{method}(): argument '{}' given twice",
                params[slot]
            )));
        }
    }
    Ok(bound)
}

fn int_param(method: &str, name: &str, value: Option<&Value>) -> Result<Option<i64>, LayoutError> {
    match value {
        None | Some(Value::None) => Ok(None),
        Some(Value::Int(v)) => Ok(Some(*v)),
        Some(Value::Tuple(_)) => Err(arg_error(format!(
            "{method}(): '{name}' must be an integer, not a tuple"
        ))),
    }
}

fn required_int(method: &str, name: &str, value: Option<&Value>) -> Result<i64, LayoutError> {
    int_param(method, name, value)?
        .ok_or_else(|| arg_error(format!("{method}(): missing argument '{name}'")))
}

fn tuple_param(method: &str, name: &str, value: Option<&Value>) -> Result<Vec<i64>, LayoutError> {
    match value {
        Some(Value::Tuple(v)) => Ok(v.clone()),
        Some(Value::Int(v)) => Ok(vec![*v]),
        Some(Value::None) | None => Err(arg_error(format!(
            "{method}(): missing argument '{name}' (a tuple like (3, 4))"
        ))),
    }
}

/// `view(3, 4)` or `view((3, 4))`: either integers or a single tuple.
fn varargs(method: &str, args: &[Arg]) -> Result<Vec<i64>, LayoutError> {
    if let Some(arg) = args.iter().find(|a| a.keyword.is_some()) {
        return Err(arg_error(format!(
            "{method}() takes no keyword arguments (got '{}=')",
            arg.keyword.as_deref().unwrap_or_default()
        )));
    }
    match args {
        [
            Arg {
                value: Value::Tuple(values),
                ..
            },
        ] => Ok(values.clone()),
        _ => args
            .iter()
            .map(|a| match a.value {
                Value::Int(v) => Ok(v),
                _ => Err(arg_error(format!(
                    "{method}() takes integers like {method}(3, 4) or one tuple like \
                     {method}((3, 4))"
                ))),
            })
            .collect(),
    }
}

/// What a step may copy: at most `single` elements, and no more than the `left` of the
/// expression's copy `budget`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CopyLimits {
    single: usize,
    left: usize,
    budget: usize,
}

/// The limits of an expression that has copied nothing yet.
pub(crate) fn budget_limits(max_elements: usize) -> CopyLimits {
    let budget = copy_budget(max_elements);
    CopyLimits {
        single: max_elements,
        left: budget,
        budget,
    }
}

impl CopyLimits {
    /// Checked before a step runs, as if it copied `numel` elements (reshape and contiguous
    /// may not copy).
    fn check(&self, numel: usize) -> Result<(), LayoutError> {
        if numel > self.single {
            Err(LayoutError::TooLarge {
                what: "a copy",
                len: numel as u128,
                max: self.single,
            })
        } else if numel > self.left {
            Err(LayoutError::TooLarge {
                what: "copy work (all copies of the expression)",
                len: (self.budget - self.left) as u128 + numel as u128,
                max: self.budget,
            })
        } else {
            Ok(())
        }
    }
}

/// One step on `tensor`; the view ops of [`Layout`] keep its storage.
pub(crate) fn apply_step<S: ViewSubject>(
    tensor: &S,
    step: &StepKind,
    limits: CopyLimits,
) -> Result<S, S::Error> {
    let (name, args) = match step {
        StepKind::Index(items) => return Ok(tensor.with_layout(tensor.layout().index(items)?)),
        StepKind::Method { name, args } => (name.as_str(), args),
    };
    let args = call_form(name, args.as_deref())?;
    match view_step(tensor.layout(), name, args) {
        Some(layout) => Ok(tensor.with_layout(layout?)),
        None => copy_step(tensor, name, args, limits),
    }
}

/// The arguments of a method step; `.T` is the one attribute and takes none.
fn call_form<'a>(name: &str, args: Option<&'a [Arg]>) -> Result<&'a [Arg], LayoutError> {
    match (args, name == "T") {
        (None, false) => Err(arg_error(format!(
            "{name} is a method: write .{name}(...) (only .T is an attribute)"
        ))),
        (Some(_), true) => Err(arg_error("T is an attribute: write .T, not .T()")),
        (args, _) => Ok(args.unwrap_or(&[])),
    }
}

/// The steps that only rewrite the layout (the storage is kept); None for any other name.
fn view_step(layout: &Layout, name: &str, args: &[Arg]) -> Option<Result<Layout, LayoutError>> {
    let ints = |params: &[&str]| required_ints(name, args, params);
    Some(match name {
        "T" => layout.reversed_dims(),
        "t" => bind(name, args, &[]).and_then(|_| layout.t()),
        "transpose" => ints(&["dim0", "dim1"]).and_then(|i| layout.transpose(i[0], i[1])),
        "select" => ints(&["dim", "index"]).and_then(|i| layout.select(i[0], i[1])),
        "narrow" => ints(&["dim", "start", "length"]).and_then(|i| layout.narrow(i[0], i[1], i[2])),
        "unsqueeze" => ints(&["dim"]).and_then(|i| layout.unsqueeze(i[0])),
        "permute" => varargs(name, args).and_then(|dims| layout.permute(&dims)),
        "expand" => varargs(name, args).and_then(|shape| layout.expand(&shape)),
        "flip" => varargs(name, args).and_then(|dims| layout.flip(&dims)),
        "view" => varargs(name, args).and_then(|shape| layout.view(&shape)),
        "diagonal" | "squeeze" | "as_strided" => optional_view_step(layout, name, args),
        _ => return None,
    })
}

/// Binds `params` and reads each as a required integer, in order.
fn required_ints(method: &str, args: &[Arg], params: &[&str]) -> Result<Vec<i64>, LayoutError> {
    let bound = bind(method, args, params)?;
    params
        .iter()
        .zip(bound)
        .map(|(param, value)| required_int(method, param, value))
        .collect()
}

/// View steps with optional or tuple arguments.
fn optional_view_step(layout: &Layout, name: &str, args: &[Arg]) -> Result<Layout, LayoutError> {
    match name {
        "diagonal" => {
            let b = bind(name, args, &["offset", "dim1", "dim2"])?;
            layout.diagonal(
                int_param(name, "offset", b[0])?.unwrap_or(0),
                int_param(name, "dim1", b[1])?.unwrap_or(0),
                int_param(name, "dim2", b[2])?.unwrap_or(1),
            )
        }
        "squeeze" => {
            let b = bind(name, args, &["dim"])?;
            match int_param(name, "dim", b[0])? {
                None => layout.squeeze(),
                Some(d) => layout.squeeze_dim(d),
            }
        }
        _ => {
            let b = bind(name, args, &["size", "stride", "storage_offset"])?;
            layout.as_strided(
                &tuple_param(name, "size", b[0])?,
                &tuple_param(name, "stride", b[1])?,
                int_param(name, "storage_offset", b[2])?,
            )
        }
    }
}

/// The steps that may copy, each checked against the copy `limits` first; any other name is
/// an unknown method.
fn copy_step<S: ViewSubject>(
    tensor: &S,
    name: &str,
    args: &[Arg],
    limits: CopyLimits,
) -> Result<S, S::Error> {
    let numel = tensor.layout().numel();
    match name {
        "reshape" => {
            let shape = varargs(name, args)?;
            if tensor.layout().view(&shape).is_err() {
                limits.check(numel)?;
            }
            reshape(tensor, &shape)
        }
        "flatten" => {
            let b = bind(name, args, &["start_dim", "end_dim"])?;
            limits.check(numel)?;
            flatten(
                tensor,
                int_param(name, "start_dim", b[0])?.unwrap_or(0),
                int_param(name, "end_dim", b[1])?.unwrap_or(-1),
            )
        }
        "contiguous" => {
            bind(name, args, &[])?;
            limits.check(numel)?;
            contiguous(tensor)
        }
        "clone" => {
            bind(name, args, &[])?;
            limits.check(numel)?;
            tensor.copy_to_contiguous()
        }
        other => Err(arg_error(format!(
            "unknown method '{other}'; known: {}",
            METHODS.join(", ")
        ))
        .into()),
    }
}
