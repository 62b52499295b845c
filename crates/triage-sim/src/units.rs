//! stub (replaced by the full module)
#![allow(missing_docs)]
use serde::{Deserialize, Deserializer};
fn num_unit(s: &str) -> (f64, String) { let s = s.trim(); let i = s.find(|c: char| c.is_alphabetic()).unwrap_or(s.len()); (s[..i].trim().parse().unwrap_or(0.0), s[i..].to_string()) }
macro_rules! q { ($n:ident, $f:expr) => {
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
pub struct $n(pub u64);
impl<'de> Deserialize<'de> for $n { fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
    #[derive(Deserialize)] #[serde(untagged)] enum V { I(u64), S(String) }
    Ok(match V::deserialize(d)? { V::I(i) => $n(i), V::S(s) => { let (v, u) = num_unit(&s); let m: f64 = $f(u.as_str()); $n((v * m).round() as u64) } })
} } } }
q!(Duration, |u: &str| match u { "ns" => 1.0, "us" => 1e3, "ms" => 1e6, "s" => 1e9, _ => 1.0 });
q!(Rate, |u: &str| match u { "kbps" => 1e3, "Mbps" => 1e6, "Gbps" => 1e9, _ => 1.0 });
q!(Size, |u: &str| match u { "KiB" => 1024.0, "MiB" => 1048576.0, "KB" => 1e3, "MB" => 1e6, _ => 1.0 });
