//! The built-in function library: Terraform 1.5.7's functions with go-cty's semantics,
//! minus the file and impure ones. Each submodule exports a table of [`FuncDef`]s;
//! [`lookup`] resolves a name once, at compile time, to a [`FuncId`] the VM calls by index.
//!
//! Calling convention (cty's `function.Function.Call`, as hcl drives it): the caller checks
//! arity, then [`prepare_args`] rejects nulls where a parameter does not allow them and
//! converts each argument to its parameter type; then the implementation runs. Errors come
//! back as [`FuncError`], which the VM turns into hcl's diagnostics ("Invalid function
//! argument; Invalid value for \"str\" parameter: ..." or "Error in function call; Call to
//! function \"f\" failed: ...").

use crate::value::{Type, Value};
use std::sync::Arc;

/// A module's table of [`FuncDef`]s, one signature a line, as cty declares them:
/// `name(param: Type, ...)`, where `Type` is a [`ParamType`] (`List(String)` for the
/// nested ones), `param?: Type` accepts null (cty's `AllowNull`) and a last
/// `..param: Type` takes any number of arguments (cty's `VarParam`); `=> imp` names the
/// implementation when it is not the function of the same name.
macro_rules! funcs {
    ($($name:ident($($sig:tt)*) $(=> $imp:expr)?),* $(,)?) => {
        &[$(funcs!(@def $name [$($sig)*] $($imp)?)),*]
    };
    (@def $name:ident [$($sig:tt)*]) => {
        funcs!(@def $name [$($sig)*] $name)
    };
    (@def $name:ident [$($sig:tt)*] $imp:expr) => {
        funcs!(@params [stringify!($name), $imp] [] $($sig)*)
    };
    (@params [$name:expr, $imp:expr] [$($p:expr,)*]) => {
        $crate::builtins::FuncDef {
            name: $name,
            params: &[$($p),*],
            var_param: None,
            imp: $imp,
            nested_unknowns: false,
        }
    };
    (@params [$name:expr, $imp:expr] [$($p:expr,)*] .. $($rest:tt)+) => {
        $crate::builtins::FuncDef {
            name: $name,
            params: &[$($p),*],
            var_param: Some(funcs!(@param $($rest)+)),
            imp: $imp,
            nested_unknowns: false,
        }
    };
    (@params $f:tt [$($p:expr,)*] $n:ident ? : $t:ident $(($($i:tt)*))? $(, $($rest:tt)*)?) => {
        funcs!(@params $f [$($p,)* funcs!(@param $n ? : $t $(($($i)*))?),] $($($rest)*)?)
    };
    (@params $f:tt [$($p:expr,)*] $n:ident : $t:ident $(($($i:tt)*))? $(, $($rest:tt)*)?) => {
        funcs!(@params $f [$($p,)* funcs!(@param $n : $t $(($($i)*))?),] $($($rest)*)?)
    };
    (@param $n:ident ? : $($t:tt)+) => {
        $crate::builtins::Param::nullable(stringify!($n), funcs!(@type $($t)+))
    };
    (@param $n:ident : $($t:tt)+) => {
        $crate::builtins::Param::new(stringify!($n), funcs!(@type $($t)+))
    };
    (@type $t:ident) => {
        $crate::builtins::ParamType::$t
    };
    (@type $t:ident($($inner:tt)+)) => {
        $crate::builtins::ParamType::$t(&funcs!(@type $($inner)+))
    };
}

pub mod collection;
pub mod control;
pub mod conversion;
pub mod crypto;
pub mod datetime;
pub mod docs;
pub mod encoding;
pub mod format;
pub mod network;
pub mod numeric;
pub mod string;

/// The declared type of a parameter (cty's parameter `Type`), constant-constructible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// `cty.DynamicPseudoType`: any value, passed through unconverted.
    Any,
    Bool,
    Number,
    String,
    List(&'static ParamType),
    Set(&'static ParamType),
    Map(&'static ParamType),
}

impl ParamType {
    /// The cty type this parameter converts its argument to, borrowed: the VM asks on
    /// every argument it converts, and the collection types of the library's parameters
    /// are built once per process (building one allocated; cloning one counts a
    /// reference). A type no parameter of the library has is built.
    pub fn to_type(self) -> std::borrow::Cow<'static, Type> {
        use std::borrow::Cow;
        match self {
            ParamType::Any => Cow::Borrowed(&Type::Dynamic),
            ParamType::Bool => Cow::Borrowed(&Type::Bool),
            ParamType::Number => Cow::Borrowed(&Type::Number),
            ParamType::String => Cow::Borrowed(&Type::String),
            _ => {
                static BUILT: std::sync::OnceLock<Vec<(ParamType, Type)>> =
                    std::sync::OnceLock::new();
                let built = BUILT.get_or_init(|| {
                    let mut v: Vec<(ParamType, Type)> = Vec::new();
                    for f in all() {
                        for p in f.params.iter().chain(f.var_param.as_ref()) {
                            if !v.iter().any(|(q, _)| *q == p.ty) {
                                v.push((p.ty, p.ty.build_type()));
                            }
                        }
                    }
                    v
                });
                match built.iter().find(|(q, _)| *q == self) {
                    Some((_, t)) => Cow::Borrowed(t),
                    None => Cow::Owned(self.build_type()),
                }
            }
        }
    }

    fn build_type(self) -> Type {
        match self {
            ParamType::Any => Type::Dynamic,
            ParamType::Bool => Type::Bool,
            ParamType::Number => Type::Number,
            ParamType::String => Type::String,
            ParamType::List(e) => Type::List(Arc::new(e.build_type())),
            ParamType::Set(e) => Type::Set(Arc::new(e.build_type())),
            ParamType::Map(e) => Type::Map(Arc::new(e.build_type())),
        }
    }
}

/// One declared parameter (cty's `function.Parameter`).
#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    pub ty: ParamType,
    /// cty's `AllowNull`: a null argument is passed to the implementation instead of
    /// being rejected with "argument must not be null".
    pub allow_null: bool,
}

impl Param {
    pub const fn new(name: &'static str, ty: ParamType) -> Param {
        Param {
            name,
            ty,
            allow_null: false,
        }
    }
    pub const fn nullable(name: &'static str, ty: ParamType) -> Param {
        Param {
            name,
            ty,
            allow_null: true,
        }
    }
}

/// Why a call failed.
#[derive(Clone, Debug, PartialEq)]
pub enum FuncError {
    /// cty's `function.ArgError`: about argument `index` (0-based over all args, variadic
    /// ones included). `message` is cty's error text without the "Invalid value for"
    /// prefix, e.g. `cannot parse "zz" as a base 10 integer`.
    Arg { index: usize, message: String },
    /// Any other error; `message` is cty's text, e.g. `no match found`.
    General(String),
}

/// A budget of the evaluation ran out inside a builtin: the call fails with the meter's
/// text (the VM sees the exceeded meter and stops the evaluation, naming the builtin).
impl From<crate::value::meter::Exceeded> for FuncError {
    fn from(e: crate::value::meter::Exceeded) -> FuncError {
        FuncError::General(e.to_string())
    }
}

impl FuncError {
    pub fn arg(index: usize, message: impl Into<String>) -> FuncError {
        FuncError::Arg {
            index,
            message: message.into(),
        }
    }
    pub fn general(message: impl Into<String>) -> FuncError {
        FuncError::General(message.into())
    }
}

/// The implementation of a function. Arguments have already been checked for arity and
/// null-ness and converted to their parameter types by [`prepare_args`]. None is unknown,
/// and none holds an unknown inside unless the function takes nested unknowns
/// ([`FuncDef::nested_unknowns`]): [`unknown_result`] answers such calls first, so only
/// those functions look for unknowns, and only inside their arguments.
pub type Impl = fn(&[Value]) -> Result<Value, FuncError>;

/// A built-in function.
#[derive(Clone, Copy, Debug)]
pub struct FuncDef {
    pub name: &'static str,
    pub params: &'static [Param],
    /// The variadic parameter, if any (cty's `VarParam`).
    pub var_param: Option<Param>,
    pub imp: Impl,
    /// Takes arguments that hold unknowns inside them (see [`passes_nested_unknowns`]);
    /// set by [`all`], so that a call reads a flag instead of comparing names.
    pub nested_unknowns: bool,
}

/// Index of a function in [`all`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FuncId(pub u16);

/// Every module's table, in one list.
fn tables() -> [&'static [FuncDef]; 10] {
    [
        numeric::FUNCS,
        string::FUNCS,
        format::FUNCS,
        collection::FUNCS,
        conversion::FUNCS,
        encoding::FUNCS,
        crypto::FUNCS,
        network::FUNCS,
        datetime::FUNCS,
        control::FUNCS,
    ]
}

/// All functions, built once.
pub fn all() -> &'static [FuncDef] {
    static ALL: std::sync::OnceLock<Vec<FuncDef>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut v: Vec<FuncDef> = tables().iter().flat_map(|t| t.iter().copied()).collect();
        v.sort_by_key(|f| f.name);
        for f in &mut v {
            f.nested_unknowns = passes_nested_unknowns(f.name);
        }
        v
    })
}

/// Resolve a function name (done once, when a program is compiled).
pub fn lookup(name: &str) -> Option<FuncId> {
    all()
        .binary_search_by(|f| f.name.cmp(name))
        .ok()
        .map(|i| FuncId(i as u16))
}

/// The definition of a resolved function.
pub fn get(id: FuncId) -> &'static FuncDef {
    &all()[id.0 as usize]
}

/// Built-ins whose implementations only move elements of their collection arguments, so
/// an unknown element stays where it is and the rest of the result is known (cty's
/// behaviour for them). Every other builtin is called only with wholly known arguments
/// (an argument holding an unknown anywhere gives an unknown result).
fn passes_nested_unknowns(name: &str) -> bool {
    matches!(
        name,
        "merge"
            | "length"
            | "keys"
            | "values"
            | "lookup"
            | "element"
            | "concat"
            | "slice"
            | "reverse"
            | "coalesce"
            | "coalescelist"
            | "tolist"
            | "tomap"
    )
}

/// Functions the DSL deliberately leaves out, with why: a call of one is still
/// "Call to unknown function", and the message says why it is missing.
pub fn unavailable_reason(name: &str) -> Option<&'static str> {
    const FILE: &[&str] = &[
        "abspath",
        "dirname",
        "basename",
        "pathexpand",
        "file",
        "fileexists",
        "fileset",
        "filebase64",
        "filebase64sha256",
        "filebase64sha512",
        "filemd5",
        "filesha1",
        "filesha256",
        "filesha512",
        "templatefile",
    ];
    const IMPURE: &[&str] = &["uuid", "uuidv5", "bcrypt", "timestamp"];
    if FILE.contains(&name) {
        Some("file functions are not available: a function-hcl program is evaluated in memory")
    } else if IMPURE.contains(&name) {
        Some(
            "impure functions are not available: a function-hcl program must give the same output for the same input",
        )
    } else {
        None
    }
}

/// The detail of hcl's "Call to unknown function" for `name`, one text for the compiler
/// and the analyzer. A namespaced name (`core::upper`) gets hcl's namespace message: no
/// function of this library has a namespace, so it is always "There are no functions in
/// namespace ...". A function the DSL leaves out on purpose says why; any other name
/// gets hcl's "Did you mean" among the library's names (`try`, `can`, `invoke` included).
pub fn unknown_function_detail(name: &str) -> String {
    use crate::text::quote::go_quote;
    use crate::text::suggest::{closest_first, suggest};
    if let Some(sep) = name.rfind("::") {
        return format!(
            "There are no functions in namespace {}.",
            go_quote(&name[..sep + 2])
        );
    }
    let hint = match unavailable_reason(name) {
        Some(why) => format!(" {why}."),
        None => {
            let mut names: Vec<&str> = all().iter().map(|f| f.name).collect();
            names.extend(["try", "can", "invoke"]);
            match suggest(name, closest_first(name, &mut names)) {
                Some(s) => format!(" Did you mean {}?", go_quote(s)),
                None => String::new(),
            }
        }
    };
    format!("There is no function named {}.{hint}", go_quote(name))
}

/// A string value built by `f` in a reused per-thread buffer, so the result is allocated
/// once at its final size, or not at all when it fits inline in a [`crate::value::Str`]
/// (not grown in a `String`, then copied into the value).
pub(crate) fn string_in_buffer<E>(
    f: impl FnOnce(&mut String) -> Result<(), E>,
) -> Result<Value, E> {
    thread_local! {
        static BUF: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    BUF.with(|buf| match buf.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            f(&mut buf)?;
            let v = Value::string(&**buf);
            if buf.capacity() > 1 << 16 {
                *buf = String::new();
            }
            Ok(v)
        }
        Err(_) => {
            let mut s = String::new();
            f(&mut s)?;
            Ok(Value::string(s))
        }
    })
}

/// Check nulls and convert arguments to their parameter types, as cty does before an
/// implementation runs. `args` must already have the right arity.
pub fn prepare_args(def: &FuncDef, args: &mut [Value]) -> Result<(), FuncError> {
    for (i, arg) in args.iter_mut().enumerate() {
        let Some(param) = def.params.get(i).or(def.var_param.as_ref()) else {
            return Err(FuncError::general("too many arguments"));
        };
        if arg.is_null() && !param.allow_null {
            return Err(FuncError::arg(i, "argument must not be null"));
        }
        if param.ty != ParamType::Any && !arg.is_null() {
            let converted = crate::value::convert::convert(arg, &param.ty.to_type())
                .map_err(|e| FuncError::arg(i, e.to_string()))?;
            *arg = converted;
        }
    }
    Ok(())
}

/// cty's rule for unknown arguments, applied before an implementation runs: an unknown
/// argument gives an unknown result, and so does an argument holding an unknown anywhere
/// inside it, except for the functions that move such values around without looking into
/// them ([`FuncDef::nested_unknowns`]), which decide for themselves (a collection knows
/// whether it holds an unknown: nothing is walked).
#[inline]
pub fn unknown_result(def: &FuncDef, args: &[Value]) -> Option<Value> {
    let nested = !def.nested_unknowns;
    args.iter()
        .any(|a| a.is_unknown() || (nested && a.contains_unknown()))
        // Made only when it is the answer (`then_some` made it, and dropped it out of
        // line, on every call).
        .then(|| Value::Unknown(crate::value::Type::Dynamic))
}

/// Call a function with arguments of the right arity (the VM checks arity first, to
/// report hcl's "Not enough/Too many function arguments" with its ranges).
pub fn call(id: FuncId, mut args: Vec<Value>) -> Result<Value, FuncError> {
    call_in_place(id, &mut args)
}

/// [`call`] on arguments the caller keeps (the VM's stack), converted in place.
pub fn call_in_place(id: FuncId, args: &mut [Value]) -> Result<Value, FuncError> {
    let def = get(id);
    prepare_args(def, args)?;
    if let Some(v) = unknown_result(def, args) {
        return Ok(v);
    }
    (def.imp)(args)
}

/// [`call`] on arguments already null-checked and converted to their parameter types
/// (the VM converts each argument as it is pushed, `Op::ConvArg`): only the
/// implementation runs, not [`prepare_args`] a second time.
pub fn call_converted(def: &FuncDef, args: &[Value]) -> Result<Value, FuncError> {
    (def.imp)(args)
}

/// The string argument `i` (type-checked before the call; a mismatch is an argument error).
fn str_arg(args: &[Value], i: usize) -> Result<&str, FuncError> {
    args.get(i)
        .and_then(Value::as_str)
        .ok_or_else(|| FuncError::arg(i, "string required"))
}

/// Terse value constructors and calls for the builtins' unit tests.
#[cfg(test)]
pub(crate) mod test_util {
    use super::{FuncError, call, lookup};
    use crate::value::Value;
    pub use crate::value::test_util::strs;

    /// Calls the builtin `name` as the VM does.
    pub fn run(name: &str, args: Vec<Value>) -> Result<Value, FuncError> {
        call(lookup(name).expect("function exists"), args)
    }

    pub fn s(x: &str) -> Value {
        Value::string(x)
    }

    pub fn n(i: i64) -> Value {
        Value::int(i)
    }

    /// A list of strings.
    pub fn str_list(xs: &[&str]) -> Value {
        Value::list(
            crate::value::Type::String,
            xs.iter().map(|x| s(x)).collect(),
        )
    }

    /// Calls `name` and expects exactly `want` (types included).
    #[track_caller]
    pub fn ok(name: &str, args: Vec<Value>, want: Value) {
        let got = run(name, args).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert!(got.raw_equals(&want), "{name}: got {got:?}\nwant {want:?}");
    }

    /// Calls `name` and expects it to fail with `want`.
    #[track_caller]
    pub fn err(name: &str, args: Vec<Value>, want: FuncError) {
        assert_eq!(run(name, args).unwrap_err(), want, "{name}");
    }
}
