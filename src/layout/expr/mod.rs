//! The EXPR language of `stridelab layout`: `arange(N)` followed by view ops, e.g.
//! `arange(12).view(3,4).T[::-1, 1:]`. Parsing lives in [`parse`]; this file binds
//! arguments and evaluates the steps on a [`Tensor`] whose storage is `0..N`.

pub mod parse;

use std::sync::Arc;

use super::error::LayoutError;
use super::strided::Layout;
use super::tensor::Tensor;
use parse::{Arg, StepKind, Value};

/// Largest storage (and largest copy / view) [`evaluate`] materialises: 16 Mi elements.
pub const MAX_VALUE_ELEMENTS: usize = 1 << 24;
/// Largest storage and copy [`evaluate_layout`] accepts: it stores no values, but a copy
/// still walks every element.
pub const MAX_LAYOUT_ONLY_ELEMENTS: usize = 1 << 30;

/// Elements all the copies of one expression may move together, as a multiple of the
/// single-copy limit (at most 2^30): each copy is checked against what is left before it runs,
/// so `.clone()` two hundred times is refused instead of taking half a minute.
const COPY_WORK_FACTOR: usize = 4;

/// The copy work one expression may do when single copies are limited to `max_elements`.
fn copy_budget(max_elements: usize) -> usize {
    max_elements.saturating_mul(COPY_WORK_FACTOR).min(1 << 30)
}

/// What a storage element must offer: `arange` fills storage cell `i` with `from_index(i)`.
pub trait StorageElement: Copy + std::fmt::Debug + 'static {
    fn from_index(index: usize) -> Self;
}

impl StorageElement for i64 {
    fn from_index(index: usize) -> i64 {
        index as i64
    }
}

impl StorageElement for f64 {
    fn from_index(index: usize) -> f64 {
        index as f64
    }
}

/// Zero-sized elements: evaluates layouts without allocating storage.
impl StorageElement for () {
    fn from_index(_: usize) {}
}

/// One evaluated step: its source text, the layout after it, and whether it copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepResult {
    pub text: String,
    pub layout: Layout,
    pub copied: bool,
    pub writable: bool,
}

/// The result of evaluating an expression.
#[derive(Debug, Clone)]
pub struct Evaluation<T> {
    pub expr: String,
    /// `arange(N)` first, then one entry per postfix step.
    pub steps: Vec<StepResult>,
    tensor: Tensor<T>,
    shares_storage: bool,
}

impl<T: StorageElement> Evaluation<T> {
    pub fn layout(&self) -> &Layout {
        self.tensor.layout()
    }

    pub fn tensor(&self) -> &Tensor<T> {
        &self.tensor
    }

    /// The storage the final view indexes: `0..N`, or the copy once a step copied.
    pub fn storage(&self) -> &[T] {
        self.tensor.storage()
    }

    pub fn storage_len(&self) -> usize {
        self.tensor.storage().len()
    }

    /// False once some step copied (then [`Evaluation::storage`] is that copy).
    pub fn shares_storage(&self) -> bool {
        self.shares_storage
    }

    /// The view's elements in logical C order.
    pub fn values(&self) -> Vec<T> {
        self.tensor.values()
    }
}

/// Evaluates `text` over an `i64` storage `0..N` (at most [`MAX_VALUE_ELEMENTS`]).
pub fn evaluate(text: &str) -> Result<Evaluation<i64>, LayoutError> {
    evaluate_as::<i64>(text, MAX_VALUE_ELEMENTS)
}

/// The final layout and its storage length, without materialising storage values (storages
/// and copies up to [`MAX_LAYOUT_ONLY_ELEMENTS`]). For kernels that build their own storage.
pub fn evaluate_layout(text: &str) -> Result<(Layout, usize), LayoutError> {
    let evaluation = evaluate_as::<()>(text, MAX_LAYOUT_ONLY_ELEMENTS)?;
    Ok((evaluation.layout().clone(), evaluation.storage_len()))
}

/// Evaluates `text` over a storage of `T::from_index(0..N)`; storages, copies and (for
/// value-bearing `T`) views larger than `max_elements` are refused with `too_large`.
pub fn evaluate_as<T: StorageElement>(
    text: &str,
    max_elements: usize,
) -> Result<Evaluation<T>, LayoutError> {
    let expr = parse::parse(text)?;
    if expr.arange > max_elements {
        return Err(LayoutError::TooLarge {
            what: "a storage",
            len: expr.arange as u128,
            max: max_elements,
        });
    }
    let storage: Arc<[T]> = (0..expr.arange).map(T::from_index).collect();
    let base = Tensor::from_storage(Arc::clone(&storage), Layout::contiguous(&[expr.arange])?)?;
    let mut steps = vec![StepResult {
        text: format!("arange({})", expr.arange),
        layout: base.layout().clone(),
        copied: false,
        writable: base.writable(),
    }];
    let mut tensor = base.clone();
    let budget = copy_budget(max_elements);
    let mut copy_left = budget;
    for step in &expr.steps {
        let limits = CopyLimits {
            single: max_elements,
            left: copy_left,
            budget,
        };
        let next = apply(&tensor, &step.kind, limits).map_err(|e| {
            // Argument errors are raised without a position; they belong to this step.
            let e = match e {
                LayoutError::Parse { column: 0, message } => LayoutError::Parse {
                    column: step.column,
                    message,
                },
                other => other,
            };
            e.in_op(step.text.trim().to_string())
        })?;
        let copied = !next.shares_storage_with(&tensor);
        if copied {
            copy_left = copy_left.saturating_sub(tensor.layout().numel());
        }
        steps.push(StepResult {
            text: step.text.trim().to_string(),
            layout: next.layout().clone(),
            copied,
            writable: next.writable(),
        });
        tensor = next;
    }
    if std::mem::size_of::<T>() > 0 && tensor.layout().numel() > max_elements {
        return Err(LayoutError::TooLarge {
            what: "the final view (its values are listed)",
            len: tensor.layout().numel() as u128,
            max: max_elements,
        });
    }
    let shares_storage = tensor.shares_storage_with(&base);
    Ok(Evaluation {
        expr: text.to_string(),
        steps,
        tensor,
        shares_storage,
    })
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

/// An argument error; `evaluate_as` fills in the column of the step it belongs to.
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
struct CopyLimits {
    single: usize,
    left: usize,
    budget: usize,
}

fn apply<T: StorageElement>(
    tensor: &Tensor<T>,
    step: &StepKind,
    limits: CopyLimits,
) -> Result<Tensor<T>, LayoutError> {
    let (name, args) = match step {
        StepKind::Index(items) => return tensor.index(items),
        StepKind::Method { name, args } => (name.as_str(), args),
    };
    let attribute = name == "T";
    match (args, attribute) {
        (None, false) => {
            return Err(arg_error(format!(
                "{name} is a method: write .{name}(...) (only .T is an attribute)"
            )));
        }
        (Some(_), true) => {
            return Err(arg_error("T is an attribute: write .T, not .T()"));
        }
        _ => {}
    }
    let empty = Vec::new();
    let args = args.as_ref().unwrap_or(&empty);
    // Checked before the step runs, as if it copied (reshape and contiguous may not).
    let copy_guard = || {
        let numel = tensor.layout().numel();
        if numel > limits.single {
            Err(LayoutError::TooLarge {
                what: "a copy",
                len: numel as u128,
                max: limits.single,
            })
        } else if numel > limits.left {
            Err(LayoutError::TooLarge {
                what: "copy work (all copies of the expression)",
                len: (limits.budget - limits.left) as u128 + numel as u128,
                max: limits.budget,
            })
        } else {
            Ok(())
        }
    };
    match name {
        "T" => tensor.reversed_dims(),
        "t" => {
            bind(name, args, &[])?;
            tensor.t()
        }
        "transpose" => {
            let b = bind(name, args, &["dim0", "dim1"])?;
            tensor.transpose(
                required_int(name, "dim0", b[0])?,
                required_int(name, "dim1", b[1])?,
            )
        }
        "permute" => tensor.permute(&varargs(name, args)?),
        "select" => {
            let b = bind(name, args, &["dim", "index"])?;
            tensor.select(
                required_int(name, "dim", b[0])?,
                required_int(name, "index", b[1])?,
            )
        }
        "narrow" => {
            let b = bind(name, args, &["dim", "start", "length"])?;
            tensor.narrow(
                required_int(name, "dim", b[0])?,
                required_int(name, "start", b[1])?,
                required_int(name, "length", b[2])?,
            )
        }
        "diagonal" => {
            let b = bind(name, args, &["offset", "dim1", "dim2"])?;
            tensor.diagonal(
                int_param(name, "offset", b[0])?.unwrap_or(0),
                int_param(name, "dim1", b[1])?.unwrap_or(0),
                int_param(name, "dim2", b[2])?.unwrap_or(1),
            )
        }
        "squeeze" => {
            let b = bind(name, args, &["dim"])?;
            match int_param(name, "dim", b[0])? {
                None => tensor.squeeze(),
                Some(d) => tensor.squeeze_dim(d),
            }
        }
        "unsqueeze" => {
            let b = bind(name, args, &["dim"])?;
            tensor.unsqueeze(required_int(name, "dim", b[0])?)
        }
        "expand" => tensor.expand(&varargs(name, args)?),
        "flip" => tensor.flip(&varargs(name, args)?),
        "as_strided" => {
            let b = bind(name, args, &["size", "stride", "storage_offset"])?;
            tensor.as_strided(
                &tuple_param(name, "size", b[0])?,
                &tuple_param(name, "stride", b[1])?,
                int_param(name, "storage_offset", b[2])?,
            )
        }
        "view" => tensor.view(&varargs(name, args)?),
        "reshape" => {
            let shape = varargs(name, args)?;
            if tensor.layout().view(&shape).is_err() {
                copy_guard()?;
            }
            tensor.reshape(&shape)
        }
        "flatten" => {
            let b = bind(name, args, &["start_dim", "end_dim"])?;
            copy_guard()?;
            tensor.flatten(
                int_param(name, "start_dim", b[0])?.unwrap_or(0),
                int_param(name, "end_dim", b[1])?.unwrap_or(-1),
            )
        }
        "contiguous" => {
            bind(name, args, &[])?;
            copy_guard()?;
            tensor.contiguous()
        }
        "clone" => {
            bind(name, args, &[])?;
            copy_guard()?;
            tensor.clone_data()
        }
        other => Err(arg_error(format!(
            "unknown method '{other}'; known: {}",
            METHODS.join(", ")
        ))),
    }
}
