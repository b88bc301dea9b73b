//! Column-oriented result tables handed to Python (and written as Parquet there).

#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
    /// Nullable float (e.g. FCT of an unfinished flow).
    OptF64(Vec<Option<f64>>),
    /// Nullable integer (e.g. an unset ssthresh).
    OptI64(Vec<Option<i64>>),
}

impl Column {
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
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Named columns of equal length, in a fixed order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn f64s(&self, name: &str) -> &[f64] {
        match self.column(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }
    pub fn i64s(&self, name: &str) -> &[i64] {
        match self.column(name) {
            Some(Column::I64(v)) => v,
            _ => panic!("no i64 column {name}"),
        }
    }
    pub fn strs(&self, name: &str) -> &[String] {
        match self.column(name) {
            Some(Column::Str(v)) => v,
            _ => panic!("no string column {name}"),
        }
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map(|(_, c)| c.len()).unwrap_or(0)
    }
}
