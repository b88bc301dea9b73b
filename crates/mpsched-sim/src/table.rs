//! Column-oriented result tables handed to Python (and written as Parquet there).

/// One column's values.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// Floats.
    F64(Vec<f64>),
    /// Integers.
    I64(Vec<i64>),
    /// Booleans.
    Bool(Vec<bool>),
    /// Strings.
    Str(Vec<String>),
    /// Nullable float (e.g. FCT of an unfinished flow).
    OptF64(Vec<Option<f64>>),
    /// Nullable integer (e.g. an unset ssthresh).
    OptI64(Vec<Option<i64>>),
}

impl Column {
    /// Arrow type name of the column ("float64", "int64", "bool", "string").
    pub fn type_name(&self) -> &'static str {
        match self {
            Column::F64(_) | Column::OptF64(_) => "float64",
            Column::I64(_) | Column::OptI64(_) => "int64",
            Column::Bool(_) => "bool",
            Column::Str(_) => "string",
        }
    }
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::OptF64(v) => v.len(),
            Column::OptI64(v) => v.len(),
        }
    }
    /// Whether the column has no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Appends `other`'s values (panics if its type differs).
    pub fn extend(&mut self, other: Column) {
        match (self, other) {
            (Column::F64(a), Column::F64(b)) => a.extend(b),
            (Column::I64(a), Column::I64(b)) => a.extend(b),
            (Column::Bool(a), Column::Bool(b)) => a.extend(b),
            (Column::Str(a), Column::Str(b)) => a.extend(b),
            (Column::OptF64(a), Column::OptF64(b)) => a.extend(b),
            (Column::OptI64(a), Column::OptI64(b)) => a.extend(b),
            (a, b) => panic!("cannot append a {} column to a {} column", b.type_name(), a.type_name()),
        }
    }
}

/// Named columns of equal length, in a fixed order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// (name, values), in output order.
    pub columns: Vec<(String, Column)>,
}

impl Table {
    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    /// The float column `name` (panics if absent or of another type).
    pub fn f64s(&self, name: &str) -> &[f64] {
        match self.column(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }
    /// The integer column `name` (panics if absent or of another type).
    pub fn i64s(&self, name: &str) -> &[i64] {
        match self.column(name) {
            Some(Column::I64(v)) => v,
            _ => panic!("no i64 column {name}"),
        }
    }
    /// The string column `name` (panics if absent or of another type).
    pub fn strs(&self, name: &str) -> &[String] {
        match self.column(name) {
            Some(Column::Str(v)) => v,
            _ => panic!("no string column {name}"),
        }
    }
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map(|(_, c)| c.len()).unwrap_or(0)
    }
    /// Appends `other`'s rows (same columns in the same order; panics otherwise). An empty
    /// table takes `other` as it is.
    pub fn append(&mut self, other: Table) {
        if self.columns.is_empty() {
            *self = other;
            return;
        }
        assert_eq!(self.columns.len(), other.columns.len(), "tables of other columns");
        for ((name, a), (other_name, b)) in self.columns.iter_mut().zip(other.columns) {
            assert_eq!(*name, other_name, "tables of other columns");
            a.extend(b);
        }
    }
}

impl Table {
    /// Builds a table from JSON objects that share keys (column order = key order of the first
    /// row). Column types follow the values: float, integer, bool or string. Columns named in
    /// `nullable` are always nullable, with the given type (`true` = float, `false` = integer), so
    /// their type does not depend on whether this run happened to produce a null.
    pub fn from_rows(rows: &[serde_json::Value], nullable: &[(&str, bool)]) -> Table {
        let Some(first) = rows.first().and_then(|r| r.as_object()) else { return Table::default() };
        let mut columns = Vec::with_capacity(first.len());
        for key in first.keys() {
            let vals: Vec<&serde_json::Value> = rows.iter().map(|r| &r[key.as_str()]).collect();
            if let Some(&(_, float)) = nullable.iter().find(|(n, _)| n == key) {
                let col = if float {
                    Column::OptF64(vals.iter().map(|v| v.as_f64()).collect())
                } else {
                    Column::OptI64(vals.iter().map(|v| v.as_i64()).collect())
                };
                columns.push((key.clone(), col));
                continue;
            }
            let nullable = vals.iter().any(|v| v.is_null());
            let kind = vals.iter().find(|v| !v.is_null());
            let col = match kind {
                Some(serde_json::Value::String(_)) => {
                    Column::Str(vals.iter().map(|v| v.as_str().unwrap_or("").to_owned()).collect())
                }
                Some(serde_json::Value::Bool(_)) => {
                    Column::Bool(vals.iter().map(|v| v.as_bool().unwrap_or(false)).collect())
                }
                Some(serde_json::Value::Number(n)) if n.is_f64() => {
                    if nullable {
                        Column::OptF64(vals.iter().map(|v| v.as_f64()).collect())
                    } else {
                        Column::F64(vals.iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect())
                    }
                }
                Some(serde_json::Value::Number(_)) => {
                    if nullable {
                        Column::OptI64(vals.iter().map(|v| v.as_i64()).collect())
                    } else {
                        Column::I64(vals.iter().map(|v| v.as_i64().unwrap_or(0)).collect())
                    }
                }
                _ => Column::OptF64(vals.iter().map(|_| None).collect()),
            };
            columns.push((key.clone(), col));
        }
        Table { columns }
    }
}
