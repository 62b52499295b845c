//! Cells of the text tables and CSV files: optional values printed the same way by every
//! command, long names shortened from the middle, and CSV files written through the `csv`
//! crate (RFC 4180 quoting) with the run's parameters as their first columns.

use std::fmt::Display;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// `v` with `prec` decimals, or `-` when there is none.
pub fn fixed(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.prec$}"))
}

/// `v` with `prec` decimals, or nothing when there is none (a CSV field).
pub fn fixed_csv(v: Option<f64>, prec: usize) -> String {
    v.map_or(String::new(), |x| format!("{x:.prec$}"))
}

/// `v` as it displays, or `-` when there is none (a table cell).
pub fn or_dash<T: Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |x| x.to_string())
}

/// `v` as it displays, or nothing when there is none (a CSV field).
pub fn or_empty<T: Display>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// `s` in at most `n` characters: when longer, its start and its end with `…` between, so
/// that names differing at their end (`/img/hero-1.jpg`, `/img/hero-2.jpg`) stay distinct.
pub fn middle(s: &str, n: usize) -> String {
    let len = s.chars().count();
    if len <= n || n < 3 {
        return s.to_string();
    }
    let tail = (n - 1) / 2;
    let head = n - 1 - tail;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(len - tail).collect();
    format!("{start}…{end}")
}

/// The width of a table column holding `cells` under `header`: the longest cell, at least
/// `min`, at most `max` (longer cells are shortened with [`middle`]).
pub fn width<'a>(header: &str, cells: impl Iterator<Item = &'a str>, min: usize, max: usize) -> usize {
    cells.map(|c| c.chars().count()).fold(header.len().max(min), usize::max).min(max)
}

/// The run a CSV row belongs to: the first columns of every CSV file triage writes, so
/// that the files of many runs concatenate into one table.
#[derive(Clone, Debug, Default)]
pub struct RunParams {
    /// The scenario's name (`reproduce cats` and so on for a reproduction).
    pub scenario: String,
    /// The variant's name; empty when the scenario has none.
    pub variant: String,
    /// The seed; `None` where the command has none.
    pub seed: Option<u64>,
}

impl RunParams {
    /// The parameters of a command that runs no scenario file (a reproduction): its name as
    /// the scenario, no variant, no seed of its own.
    pub fn command(name: &str) -> RunParams {
        RunParams { scenario: name.to_string(), variant: String::new(), seed: None }
    }
}

/// Names of the parameter columns, in order.
pub const PARAM_COLUMNS: [&str; 4] = ["scenario", "variant", "seed", "triage_version"];

/// One CSV file: its header, then rows that each start with the run's parameters.
pub struct CsvFile {
    w: csv::Writer<BufWriter<File>>,
    columns: usize,
}

/// What writing a CSV file returns.
pub type CsvResult<T> = Result<T, String>;

impl CsvFile {
    /// Creates `path` and writes its header: the parameter columns, then `header`.
    pub fn create(path: &Path, header: &[&str]) -> CsvResult<CsvFile> {
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut w = csv::Writer::from_writer(BufWriter::new(file));
        let all: Vec<&str> = PARAM_COLUMNS.iter().chain(header).copied().collect();
        w.write_record(&all).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(CsvFile { w, columns: all.len() })
    }

    /// Writes one row: `params`, then `fields` (as many as the header's columns).
    pub fn row(&mut self, params: &RunParams, fields: &[String]) -> CsvResult<()> {
        debug_assert_eq!(PARAM_COLUMNS.len() + fields.len(), self.columns);
        let seed = or_empty(params.seed);
        let head = [params.scenario.as_str(), params.variant.as_str(), seed.as_str(), env!("CARGO_PKG_VERSION")];
        let record = head.into_iter().chain(fields.iter().map(String::as_str));
        self.w.write_record(record).map_err(|e| e.to_string())
    }

    /// Flushes the file.
    pub fn finish(mut self) -> CsvResult<()> {
        self.w.flush().map_err(|e| e.to_string())
    }
}

/// Writes `rows` under `header` into `path` with `params` on each: a whole file at once. A
/// `seed` column of `header` (a reproduction's per-run seed) moves into the parameters'
/// `seed` column, so that every file has one seed column in one place.
pub fn write_csv(path: &Path, params: &RunParams, header: &[&str], rows: &[Vec<String>]) -> CsvResult<()> {
    let seed_col = header.iter().position(|h| *h == "seed");
    let names: Vec<&str> = header.iter().enumerate().filter(|(i, _)| Some(*i) != seed_col).map(|(_, h)| *h).collect();
    let mut f = CsvFile::create(path, &names)?;
    for r in rows {
        match seed_col {
            Some(c) => {
                let mut r = r.clone();
                let seed = r.remove(c);
                let p = RunParams { seed: seed.parse().ok(), ..params.clone() };
                f.row(&p, &r)?;
            }
            None => f.row(params, r)?,
        }
    }
    f.finish().map_err(|e| format!("{}: {e}", path.display()))
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

    #[test]
    fn long_names_keep_their_start_and_end() {
        assert_eq!(middle("short", 10), "short");
        // 15 characters: the first 7, the ellipsis, the last 7.
        assert_eq!(middle("cdn.example.com/img/hero-1.jpg", 15), "cdn.exa…o-1.jpg");
        assert_eq!(middle("cdn.example.com/img/hero-1.jpg", 15).chars().count(), 15);
        assert_ne!(middle("cdn.example.com/img/hero-1.jpg", 15), middle("cdn.example.com/img/hero-2.jpg", 15));
        assert_eq!(width("flow", ["a", "abcdefgh"].into_iter(), 6, 40), 8);
        assert_eq!(width("flow", ["a"].into_iter(), 6, 40), 6);
    }

    #[test]
    fn csv_rows_are_quoted_and_start_with_the_parameters() {
        let dir = std::env::temp_dir().join(format!("triage-table-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = RunParams { scenario: "s".into(), variant: String::new(), seed: Some(7) };
        let path = dir.join("x.csv");
        write_csv(&path, &p, &["name", "bytes"], &[vec!["a, \"b\"".into(), "3".into()]]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(text, format!("scenario,variant,seed,triage_version,name,bytes\ns,,7,{v},\"a, \"\"b\"\"\",3\n"));
        // A reproduction's per-run seed column becomes the seed parameter.
        write_csv(&path, &RunParams::command("r"), &["seed", "ms"], &[vec!["3".into(), "1.5".into()]]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("scenario,variant,seed,triage_version,ms\nr,,3,{v},1.5\n"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
