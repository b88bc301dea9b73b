//! Algorithms chosen by name with typed parameters: the machinery shared by the scheduler
//! registry ([`crate::sched`]) and the congestion-control registry ([`crate::cc`]).
//!
//! A user names an algorithm as `name` or `name:key=value,key=value` (command line, scenario
//! files, Python), and may give parameters separately as a table (a scenario's
//! `[flows.scheduler_params.NAME]`). Each algorithm declares its parameters once, with
//! [`params!`](crate::params): a struct whose fields carry a type, a default, an allowed range
//! and a doc line. That one declaration gives the defaults, the validation with one-line errors,
//! the canonical text of a choice and the rows of the documentation table.
//!
//! Resolving a name gives a [`Spec`]: the typed parameters of one registered algorithm plus the
//! label the user will see in results. A `Spec` is plain data (`Clone`, `PartialEq`); the
//! connection builds its scheduler and controllers from it.

use std::fmt;
use std::sync::Arc;

/// A parameter value as a user wrote it (scenario table, `key=value` text, Python).
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// Any other text (the name of a choice).
    Str(String),
}

impl ParamValue {
    /// Reads the value part of `key=value` text: `true`/`false`, an integer, a number, else a
    /// string.
    pub fn parse_text(s: &str) -> ParamValue {
        let s = s.trim();
        match s {
            "true" => return ParamValue::Bool(true),
            "false" => return ParamValue::Bool(false),
            _ => {}
        }
        if let Ok(i) = s.parse::<i64>() {
            return ParamValue::Int(i);
        }
        match s.parse::<f64>() {
            Ok(x) if !s.eq_ignore_ascii_case("nan") && !s.to_ascii_lowercase().contains("inf") => ParamValue::Float(x),
            _ => ParamValue::Str(s.to_string()),
        }
    }
}

impl fmt::Display for ParamValue {
    /// The canonical text: `true`, `2`, `0.7` (shortest form that reads back exactly), `wait`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Str(s) => f.write_str(s),
        }
    }
}

/// A Rust type a parameter can have: how it reads a [`ParamValue`] and writes itself back.
pub trait ParamType: Sized + Clone {
    /// What the documentation and error messages call this type ("a number", ...).
    const KIND: &'static str;
    /// Converts a user's value; `Err` says what was expected.
    fn from_value(v: &ParamValue) -> Result<Self, String>;
    /// The value as a user would write it.
    fn to_value(&self) -> ParamValue;
}

fn expected(what: &str, v: &ParamValue) -> String {
    match v {
        ParamValue::Str(s) => format!("expected {what}, got {s:?}"),
        v => format!("expected {what}, got {v}"),
    }
}

impl ParamType for f64 {
    const KIND: &'static str = "a number";
    fn from_value(v: &ParamValue) -> Result<Self, String> {
        match *v {
            ParamValue::Float(x) if x.is_finite() => Ok(x),
            ParamValue::Int(i) => Ok(i as f64),
            _ => Err(expected("a finite number", v)),
        }
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Float(*self)
    }
}

impl ParamType for bool {
    const KIND: &'static str = "true or false";
    fn from_value(v: &ParamValue) -> Result<Self, String> {
        match *v {
            ParamValue::Bool(b) => Ok(b),
            _ => Err(expected("true or false", v)),
        }
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Bool(*self)
    }
}

macro_rules! int_param {
    ($($t:ty),+) => {$(
        impl ParamType for $t {
            const KIND: &'static str = "a non-negative integer";
            fn from_value(v: &ParamValue) -> Result<Self, String> {
                let i = match *v {
                    ParamValue::Int(i) if i >= 0 => i as u64,
                    // 2.0 from a JSON or Python float is the integer 2.
                    ParamValue::Float(x) if x.fract() == 0.0 && (0.0..9.0e15).contains(&x) => x as u64,
                    _ => return Err(expected(Self::KIND, v)),
                };
                <$t>::try_from(i).map_err(|_| expected(&format!("at most {}", <$t>::MAX), v))
            }
            fn to_value(&self) -> ParamValue {
                ParamValue::Int(*self as i64)
            }
        }
    )+};
}
int_param!(u32, u64, usize);

/// A parameter that takes one of a few names: `choice! { pub enum OnBusy { MinRtt = "minrtt",
/// Wait = "wait" } }` declares the enum and its [`ParamType`].
#[macro_export]
macro_rules! choice {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $($(#[doc = $doc:literal])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name { $($(#[doc = $doc])* $variant),+ }

        impl $crate::algo::ParamType for $name {
            const KIND: &'static str = concat!("one of" $(, " \"", $text, "\"")+);
            fn from_value(v: &$crate::algo::ParamValue) -> Result<Self, String> {
                match v {
                    $($crate::algo::ParamValue::Str(s) if s == $text => Ok($name::$variant),)+
                    $crate::algo::ParamValue::Str(s) => Err(format!("expected {}, got {s:?}", Self::KIND)),
                    v => Err(format!("expected {}, got {v}", Self::KIND)),
                }
            }
            fn to_value(&self) -> $crate::algo::ParamValue {
                $crate::algo::ParamValue::Str(match self { $($name::$variant => $text,)+ }.to_string())
            }
        }
    };
}

/// One parameter of an algorithm, for documentation and help texts.
#[derive(Clone, Copy, Debug)]
pub struct ParamDoc {
    /// The key users write (`beta`).
    pub name: &'static str,
    /// Its type ("a number", "one of \"minrtt\" \"wait\"", ...).
    pub kind: &'static str,
    /// Allowed values beyond the type ("(0, 1)"), empty if any value of the type is allowed.
    pub range: &'static str,
    /// What it does, citing its source.
    pub doc: &'static str,
}

/// An algorithm's parameter struct, declared with [`params!`](crate::params).
pub trait Params: Default + Clone + fmt::Debug + PartialEq + Send + Sync + 'static {
    /// Every parameter, in declaration order.
    const DOCS: &'static [ParamDoc];
    /// Sets `key` from a user's value; `Err` says what was expected (without the key).
    fn set(&mut self, key: &str, v: &ParamValue) -> Result<(), String>;
    /// The current value of `key`.
    fn get(&self, key: &str) -> Option<ParamValue>;
}

/// Declares a parameter struct: every field with its type, default, optional allowed range
/// (text for the docs, then a check) and doc comment.
///
/// ```
/// mpsched_transport::params! {
///     /// CUBIC's knobs.
///     pub struct Knobs {
///         /// Multiplicative decrease factor (RFC 9438 §4.6).
///         beta: f64 = 0.7, "(0, 1)" if |x: &f64| *x > 0.0 && *x < 1.0;
///         /// Fast convergence (RFC 9438 §4.7).
///         fast_convergence: bool = true;
///     }
/// }
/// use mpsched_transport::algo::{Params, ParamValue};
/// let mut k = Knobs::default();
/// assert_eq!(k.beta, 0.7);
/// k.set("beta", &ParamValue::Float(0.5)).unwrap();
/// assert_eq!(k.set("beta", &ParamValue::Float(1.5)).unwrap_err(), "expected (0, 1), got 1.5");
/// ```
#[macro_export]
macro_rules! params {
    ($(#[$m:meta])* $vis:vis struct $name:ident {
        $($(#[doc = $doc:literal])* $field:ident : $ty:ty = $default:expr $(, $range:literal if $check:expr)? ;)*
    }) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq)]
        $vis struct $name { $($(#[doc = $doc])* pub $field: $ty,)* }

        impl Default for $name {
            fn default() -> Self {
                $name { $($field: $default,)* }
            }
        }

        impl $crate::algo::Params for $name {
            const DOCS: &'static [$crate::algo::ParamDoc] = &[$($crate::algo::ParamDoc {
                name: stringify!($field),
                kind: <$ty as $crate::algo::ParamType>::KIND,
                range: concat!("" $(, $range)?),
                doc: concat!("" $(, $doc)*),
            },)*];
            #[allow(unused_variables)]
            fn set(&mut self, key: &str, v: &$crate::algo::ParamValue) -> Result<(), String> {
                match key {
                    $(stringify!($field) => {
                        let x = <$ty as $crate::algo::ParamType>::from_value(v)?;
                        $(if !($check)(&x) {
                            return Err(format!("expected {}, got {}", $range, v));
                        })?
                        self.$field = x;
                        Ok(())
                    })*
                    _ => Err(String::new()),
                }
            }
            fn get(&self, key: &str) -> Option<$crate::algo::ParamValue> {
                match key {
                    $(stringify!($field) => Some($crate::algo::ParamType::to_value(&self.$field)),)*
                    _ => None,
                }
            }
        }
    };
}

params! {
    /// The parameters of an algorithm that has none.
    pub struct NoParams {}
}

/// A built-in algorithm that is made from its parameter struct.
pub trait FromParams {
    /// Its parameters.
    type Params: Params;
    /// Builds a fresh instance (the connection builds one per connection, or per subflow for a
    /// congestion controller).
    fn from_params(p: &Self::Params) -> Self;
}

impl<T: FromParams> FromParams for Box<T> {
    type Params = T::Params;
    fn from_params(p: &Self::Params) -> Self {
        Box::new(T::from_params(p))
    }
}

/// Implements [`FromParams`] with [`NoParams`] for a type built by `Default`: an algorithm
/// without parameters.
#[macro_export]
macro_rules! no_params {
    ($ty:ty) => {
        impl $crate::algo::FromParams for $ty {
            type Params = $crate::algo::NoParams;
            fn from_params(_: &$crate::algo::NoParams) -> Self {
                <$ty as Default>::default()
            }
        }
    };
}

/// The part of a registry that does not depend on the algorithm's trait: the `Any*` enum
/// (built-ins plus one boxed plug-in), the typed `*Algo` enum, the table of names, aliases and
/// parameter docs, the [`AlgoSet`] impl and `build`. `cc::registry!` and `sched::registry!` call
/// it with their one-line-per-algorithm tables and add their trait's dispatch.
#[doc(hidden)]
#[macro_export]
macro_rules! algo_registry {
    (any $any:ident, algo $algo:ident, dyn $tr:path, what $what:literal, entries $entries:ident;
     $($(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])? $variant:ident($ty:ty) $name:literal
        [$($alias:literal $(= $preset:literal)?),*];)+) => {
        #[doc = concat!("Any ", $what, ": built-ins by `match`, user plug-ins boxed.")]
        pub enum $any {
            $($(#[cfg($cfg)])? #[doc = concat!("`", $name, "`")] $variant($ty),)+
            /// A user's algorithm.
            Custom(Box<dyn $tr + Send + Sync>),
        }

        #[doc = concat!("A ", $what, " and its typed parameters: what a spec holds.")]
        #[derive(Clone, Debug, PartialEq)]
        pub enum $algo {
            $($(#[cfg($cfg)])? #[doc = concat!("`", $name, "`")] $variant(<$ty as $crate::algo::FromParams>::Params),)+
            /// A user's algorithm, built by its factory.
            Custom($crate::algo::Custom<dyn $tr + Send + Sync>),
        }

        static $entries: &[$crate::algo::AlgoEntry] = &[$($(#[cfg($cfg)])? $crate::algo::AlgoEntry {
            name: $name,
            aliases: &[$(($alias, concat!("" $(, $preset)?))),*],
            params: <<$ty as $crate::algo::FromParams>::Params as $crate::algo::Params>::DOCS,
            doc: concat!("" $(, $doc)*),
        },)+];

        /// The plug-ins registered at run time ([`crate::plugin`]).
        static PLUGINS: $crate::plugin::Plugins<dyn $tr + Send + Sync> = $crate::plugin::Plugins::new();
        /// The loaders registered at run time ([`crate::plugin::Loaders`]).
        static LOADERS: $crate::plugin::Loaders<dyn $tr + Send + Sync> = $crate::plugin::Loaders::new();

        impl $crate::algo::AlgoSet for $algo {
            const WHAT: &'static str = $what;
            type Dyn = dyn $tr + Send + Sync;
            fn plugins() -> &'static $crate::plugin::Plugins<Self::Dyn> {
                &PLUGINS
            }
            fn loaders() -> &'static $crate::plugin::Loaders<Self::Dyn> {
                &LOADERS
            }
            fn from_custom(c: $crate::algo::Custom<Self::Dyn>) -> Self {
                $algo::Custom(c)
            }
            fn entries() -> &'static [$crate::algo::AlgoEntry] {
                $entries
            }
            fn defaults(name: &str) -> Option<Self> {
                match name {
                    $($(#[cfg($cfg)])? $name => Some($algo::$variant(Default::default())),)+
                    _ => None,
                }
            }
            fn set(&mut self, key: &str, v: &$crate::algo::ParamValue) -> Result<(), String> {
                use $crate::algo::Params as _;
                match self {
                    $($(#[cfg($cfg)])? $algo::$variant(p) => p.set(key, v),)+
                    $algo::Custom(_) => Err(String::new()),
                }
            }
            fn get(&self, key: &str) -> Option<$crate::algo::ParamValue> {
                use $crate::algo::Params as _;
                match self {
                    $($(#[cfg($cfg)])? $algo::$variant(p) => p.get(key),)+
                    $algo::Custom(_) => None,
                }
            }
            fn docs(&self) -> &'static [$crate::algo::ParamDoc] {
                match self {
                    $($(#[cfg($cfg)])? $algo::$variant(_) => <<$ty as $crate::algo::FromParams>::Params as $crate::algo::Params>::DOCS,)+
                    $algo::Custom(_) => &[],
                }
            }
        }

        impl $algo {
            /// A fresh instance with these parameters.
            pub fn build(&self) -> $any {
                match self {
                    $($(#[cfg($cfg)])? $algo::$variant(p) => $any::$variant(<$ty as $crate::algo::FromParams>::from_params(p)),)+
                    $algo::Custom(c) => $any::Custom((c.factory)()),
                }
            }
        }
    };
}

/// One registered algorithm, for help texts and the documentation table.
#[derive(Clone, Copy, Debug)]
pub struct AlgoEntry {
    /// The canonical name (`minrtt`).
    pub name: &'static str,
    /// Other names, each with the parameters it presets (`("minrtt-norp", "opportunistic=false")`).
    pub aliases: &'static [(&'static str, &'static str)],
    /// Its parameters.
    pub params: &'static [ParamDoc],
    /// One line on what it is.
    pub doc: &'static str,
}

/// A set of algorithms with typed parameters: implemented by the registry macros of
/// [`crate::sched`] and [`crate::cc`], used by [`Spec`].
pub trait AlgoSet: Sized + Clone + fmt::Debug {
    /// "scheduler" or "congestion control", for messages.
    const WHAT: &'static str;
    /// The registered algorithms.
    fn entries() -> &'static [AlgoEntry];
    /// The algorithm with canonical name `name`, every parameter at its default.
    fn defaults(name: &str) -> Option<Self>;
    /// Sets one parameter of this algorithm (`Err("")` for an unknown key).
    fn set(&mut self, key: &str, v: &ParamValue) -> Result<(), String>;
    /// Reads one parameter.
    fn get(&self, key: &str) -> Option<ParamValue>;
    /// The parameters this algorithm declares.
    fn docs(&self) -> &'static [ParamDoc];
    /// The plug-in trait object (`dyn Scheduler + Send + Sync`).
    type Dyn: ?Sized + 'static;
    /// The plug-ins registered at run time.
    fn plugins() -> &'static crate::plugin::Plugins<Self::Dyn>;
    /// The loaders registered at run time (`prefix:ARGUMENT` names).
    fn loaders() -> &'static crate::plugin::Loaders<Self::Dyn>;
    /// The algorithm of a plug-in.
    fn from_custom(c: Custom<Self::Dyn>) -> Self;
}

/// What was wrong with an algorithm name or parameter. `key` is the parameter (`None` when the
/// name itself is wrong); `msg` says what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The parameter at fault, if any.
    pub key: Option<String>,
    /// What was expected, and what was given.
    pub msg: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(k) => write!(f, "{k}: {}", self.msg),
            None => f.write_str(&self.msg),
        }
    }
}

impl std::error::Error for ParamError {}

/// A user's own algorithm (a plug-in): its label and a factory that builds an instance.
pub struct Custom<T: ?Sized> {
    /// The name it is known by.
    pub name: String,
    /// Builds one instance.
    pub factory: Arc<dyn Fn() -> Box<T> + Send + Sync>,
}

impl<T: ?Sized> Clone for Custom<T> {
    fn clone(&self) -> Self {
        Custom { name: self.name.clone(), factory: self.factory.clone() }
    }
}

impl<T: ?Sized> fmt::Debug for Custom<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Custom({:?})", self.name)
    }
}

impl<T: ?Sized> PartialEq for Custom<T> {
    /// Two plug-ins are equal when they share the same factory.
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && Arc::ptr_eq(&self.factory, &other.factory)
    }
}

/// An algorithm chosen by name, with typed parameters and the label users see.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec<A> {
    label: String,
    algo: A,
}

/// Splits `name:key=value,...` into the name and its `(key, value)` pairs.
pub fn split_params(text: &str) -> Result<(String, Vec<(String, ParamValue)>), ParamError> {
    let text = text.trim();
    let (name, rest) = text.split_once(':').unwrap_or((text, ""));
    let mut out = Vec::new();
    for kv in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| ParamError { key: None, msg: format!("{kv:?}: expected key=value after \"{name}:\"") })?;
        out.push((k.trim().to_string(), ParamValue::parse_text(v)));
    }
    Ok((name.trim().to_ascii_lowercase(), out))
}

impl<A: AlgoSet> Spec<A> {
    /// Parses `name` or `name:key=value,...` (names case-insensitive).
    pub fn parse(text: &str) -> Result<Self, ParamError> {
        Self::resolve(text, |_| &[])
    }

    /// Parses `text` as [`Spec::parse`], applying first the parameters that `table` returns for
    /// the algorithm's canonical name (a scenario's `[flows.scheduler_params.NAME]`), then the
    /// ones written after the colon. The label is the name as written followed by every
    /// parameter given either way, in declaration order.
    pub fn resolve<'t>(text: &str, table: impl Fn(&str) -> &'t [(String, ParamValue)]) -> Result<Self, ParamError> {
        // The name first: an unknown name is the error, whatever follows the colon.
        let head = text.trim().split_once(':').map_or(text.trim(), |(n, _)| n).trim().to_ascii_lowercase();
        let (entry, preset) = match Self::lookup(&head) {
            Ok(found) => found,
            Err(e) => {
                return Self::resolve_plugin(&head, text, &table)
                    .or_else(|| Self::resolve_loader(&head, text, &table))
                    .unwrap_or(Err(e))
            }
        };
        let (name, inline) = split_params(text)?;
        let mut algo = A::defaults(entry.name).expect("registered name");
        let mut given: Vec<&'static str> = Vec::new();
        let preset = split_params(&format!("{}:{preset}", entry.name))?.1;
        for (layer, kvs) in [(0, &preset[..]), (1, table(entry.name)), (2, &inline[..])] {
            for (k, v) in kvs {
                Self::set_one(&mut algo, entry.name, k, v)?;
                let doc = entry.params.iter().find(|d| d.name == k).expect("set checked the key");
                if layer > 0 && !given.contains(&doc.name) {
                    given.push(doc.name);
                }
            }
        }
        let mut label = name;
        let shown: Vec<String> = entry
            .params
            .iter()
            .filter(|d| given.contains(&d.name))
            .map(|d| format!("{}={}", d.name, algo.get(d.name).expect("declared")))
            .collect();
        if !shown.is_empty() {
            label = format!("{label}:{}", shown.join(","));
        }
        Ok(Spec { label, algo })
    }

    /// The plug-in `name` (`None` if there is none): plug-ins take no parameters, neither after
    /// the colon nor in a table.
    fn resolve_plugin<'t>(
        name: &str,
        text: &str,
        table: impl Fn(&str) -> &'t [(String, ParamValue)],
    ) -> Option<Result<Self, ParamError>> {
        let custom = A::plugins().get(name)?;
        let inline = match split_params(text) {
            Ok((_, inline)) => inline,
            Err(e) => return Some(Err(e)),
        };
        if let Some((k, _)) = inline.first().or(table(name).first()) {
            return Some(Err(ParamError { key: Some(k.clone()), msg: format!("{name} takes no parameters") }));
        }
        Some(Ok(Spec { label: name.to_string(), algo: A::from_custom(custom) }))
    }

    /// The algorithm a registered loader builds for `prefix:ARGUMENT` (`None` if no loader has
    /// that prefix); labelled with the text as written. A loaded algorithm takes no table.
    fn resolve_loader<'t>(
        prefix: &str,
        text: &str,
        table: impl Fn(&str) -> &'t [(String, ParamValue)],
    ) -> Option<Result<Self, ParamError>> {
        let loader = A::loaders().get(prefix)?;
        if let Some((k, _)) = table(prefix).first() {
            return Some(Err(ParamError { key: Some(k.clone()), msg: format!("{prefix} takes no parameters") }));
        }
        let text = text.trim();
        let arg = text.split_once(':').map_or("", |(_, a)| a.trim());
        Some(match loader(arg) {
            Ok(custom) => Ok(Spec {
                label: format!("{prefix}{}", if arg.is_empty() { String::new() } else { format!(":{arg}") }),
                algo: A::from_custom(custom),
            }),
            Err(msg) => Err(ParamError { key: None, msg }),
        })
    }

    /// Registers a loader for names `prefix` and `prefix:ARGUMENT` ([`crate::plugin::Loaders`]);
    /// a built-in's name or alias is refused.
    pub fn register_loader(prefix: &str, loader: crate::plugin::Loader<A::Dyn>) -> Result<(), String> {
        crate::plugin::check_name(prefix)?;
        if Self::lookup(prefix).is_ok() {
            return Err(format!("{prefix:?} is the name of a built-in {}; choose another name", A::WHAT));
        }
        A::loaders().insert(prefix, loader);
        Ok(())
    }

    /// Registers a plug-in as `name` ([`crate::plugin`]): `factory` builds one instance per
    /// connection (per subflow for a congestion control). A second registration of `name`
    /// replaces the first; a built-in's name or alias is refused.
    pub fn register_plugin(name: &str, factory: Arc<dyn Fn() -> Box<A::Dyn> + Send + Sync>) -> Result<(), String> {
        crate::plugin::check_name(name)?;
        if Self::lookup(name).is_ok() {
            return Err(format!("{name:?} is the name of a built-in {}; choose another name", A::WHAT));
        }
        A::plugins().insert(name, factory);
        Ok(())
    }

    /// Removes the plug-in `name`; false if there was none.
    pub fn unregister_plugin(name: &str) -> bool {
        A::plugins().remove(name)
    }

    /// The prefixes of the registered loaders, sorted.
    pub fn loader_prefixes() -> Vec<String> {
        A::loaders().prefixes()
    }

    /// The names of the registered plug-ins, sorted.
    pub fn plugin_names() -> Vec<String> {
        A::plugins().names()
    }

    /// Checks a table of parameters for the algorithm with canonical name `name`, without
    /// building anything (a scenario validates every table it holds, used or not).
    pub fn check_table(name: &str, kvs: &[(String, ParamValue)]) -> Result<(), ParamError> {
        if A::defaults(name).is_none() && (A::plugins().get(name).is_some() || A::loaders().get(name).is_some()) {
            return match kvs.first() {
                Some((k, _)) => Err(ParamError { key: Some(k.clone()), msg: format!("{name} takes no parameters") }),
                None => Ok(()),
            };
        }
        let mut algo = A::defaults(name).ok_or_else(|| ParamError {
            key: None,
            msg: format!("unknown {} {name:?}, expected one of {:?}", A::WHAT, Self::known(Self::canonical_names())),
        })?;
        kvs.iter().try_for_each(|(k, v)| Self::set_one(&mut algo, name, k, v))
    }

    fn set_one(algo: &mut A, name: &str, k: &str, v: &ParamValue) -> Result<(), ParamError> {
        algo.set(k, v).map_err(|msg| {
            if msg.is_empty() {
                let keys: Vec<&str> = algo.docs().iter().map(|d| d.name).collect();
                let msg = if keys.is_empty() {
                    format!("{name} takes no parameters")
                } else {
                    format!("unknown {name} parameter, expected one of {}", keys.join(", "))
                };
                ParamError { key: Some(k.to_string()), msg }
            } else {
                ParamError { key: Some(k.to_string()), msg }
            }
        })
    }

    fn lookup(name: &str) -> Result<(&'static AlgoEntry, &'static str), ParamError> {
        for e in A::entries() {
            if e.name == name {
                return Ok((e, ""));
            }
            if let Some((_, preset)) = e.aliases.iter().find(|(a, _)| *a == name) {
                return Ok((e, preset));
            }
        }
        Err(ParamError {
            key: None,
            msg: format!("unknown {} {name:?}, expected one of {:?}", A::WHAT, Self::known(Self::names())),
        })
    }

    /// `builtins` followed by the registered plug-ins' names (for error messages).
    fn known(builtins: Vec<&'static str>) -> Vec<String> {
        builtins.into_iter().map(str::to_string).chain(Self::plugin_names()).collect()
    }

    /// Every accepted name (canonical names and aliases).
    pub fn names() -> Vec<&'static str> {
        A::entries().iter().flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().map(|a| a.0))).collect()
    }

    /// The canonical names.
    pub fn canonical_names() -> Vec<&'static str> {
        A::entries().iter().map(|e| e.name).collect()
    }

    /// A spec of an already-typed algorithm, labelled `label`.
    pub fn from_algo(label: impl Into<String>, algo: A) -> Self {
        Spec { label: label.into(), algo }
    }

    /// The name and parameters as the user gave them (`olms:l=3`): what results record.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The typed algorithm and its parameters.
    pub fn algo(&self) -> &A {
        &self.algo
    }

    /// Every parameter with its value, defaults included, in declaration order.
    pub fn params(&self) -> Vec<(&'static str, ParamValue)> {
        self.algo.docs().iter().map(|d| (d.name, self.algo.get(d.name).expect("declared"))).collect()
    }
}

impl<A: AlgoSet> std::str::FromStr for Spec<A> {
    type Err = ParamError;
    fn from_str(s: &str) -> Result<Self, ParamError> {
        Self::parse(s)
    }
}

impl<A> fmt::Display for Spec<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

/// The Markdown reference of a registry: one section per algorithm with its aliases and a table
/// of its parameters (type, default, allowed range, meaning). `docs/algorithms.md` is made
/// from it (a test keeps the file current). Entries named in `skip` are left out.
pub fn markdown<A: AlgoSet>(skip: &[&str]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for e in A::entries().iter().filter(|e| !skip.contains(&e.name)) {
        let _ = writeln!(s, "### `{}`\n\n{}\n", e.name, e.doc.trim());
        if !e.aliases.is_empty() {
            let aliases: Vec<String> = e
                .aliases
                .iter()
                .map(|(a, p)| if p.is_empty() { format!("`{a}`") } else { format!("`{a}` (= `{}:{p}`)", e.name) })
                .collect();
            let _ = writeln!(s, "Also named: {}.\n", aliases.join(", "));
        }
        if e.params.is_empty() {
            let _ = writeln!(s, "No parameters.\n");
            continue;
        }
        let defaults = A::defaults(e.name).expect("registered");
        let _ = writeln!(s, "| parameter | type | default | allowed | meaning |\n| --- | --- | --- | --- | --- |");
        for d in e.params {
            let default = defaults.get(d.name).expect("declared");
            let range = if d.range.is_empty() { "any".to_string() } else { d.range.to_string() };
            let _ = writeln!(s, "| `{}` | {} | `{default}` | {range} | {} |", d.name, d.kind, d.doc.trim());
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
#[path = "algo_tests.rs"]
mod tests;
