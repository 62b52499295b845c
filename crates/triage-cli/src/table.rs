//! Cells of the reproductions' text tables and CSV files: optional values, printed the same
//! way by every paper's reproduction.

use std::fmt::Display;

/// `v` with `prec` decimals, or `-` when there is none.
pub fn fixed(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.prec$}"))
}

/// `v` as it displays, or `-` when there is none (a table cell).
pub fn or_dash<T: Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |x| x.to_string())
}

/// `v` as it displays, or nothing when there is none (a CSV field).
pub fn or_empty<T: Display>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells() {
        assert_eq!(fixed(Some(2.345), 1), "2.3");
        assert_eq!(fixed(Some(1234.5), 0), "1234");
        assert_eq!(fixed(None, 3), "-");
        assert_eq!(or_dash(Some(8275u64)), "8275");
        assert_eq!(or_dash::<u64>(None), "-");
        assert_eq!(or_empty(Some(0.5)), "0.5");
        assert_eq!(or_empty::<f64>(None), "");
    }
}
