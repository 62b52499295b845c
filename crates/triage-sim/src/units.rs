//! Human-readable units for scenario files: [`Duration`], [`Rate`] and [`Size`].
//!
//! Scenario files (TOML) write quantities the way people say them: `delay = "25ms"`,
//! `rate = "1638.4kbps"`, `buffer = "64KiB"`. Each type here is a `u64` newtype in its
//! base unit (nanoseconds, bits per second, bytes) and
//!
//! - deserializes from such a string, or from a bare non-negative integer meaning the base
//!   unit (`delay = 25000000` is 25 ms);
//! - serializes as its canonical string (the [`Display`](fmt::Display) form);
//! - parses with [`FromStr`] from the same strings.
//!
//! # Grammar
//!
//! `[whitespace] digits [ "." digits ] [whitespace] unit [whitespace]`
//!
//! - The unit is required in strings: `"25"` is rejected (a bare number is only accepted as
//!   a TOML/JSON integer), so that a forgotten unit is never silently read as nanoseconds.
//! - No sign: negative quantities are rejected.
//! - Decimals are allowed only when the result is an exact integer in the base unit:
//!   `"1.5s"` and `"1.5KiB"` are fine, `"0.5ns"` and `"1.0001B"` are errors.
//! - Values that do not fit in a `u64` are errors, never panics or wrap-arounds.
//!
//! # Canonical form
//!
//! [`Display`](fmt::Display) prints an integer in the largest unit that divides the value
//! exactly (`1_500_000_000` ns prints as `"1500ms"`, `60 s` as `"1min"`), so that
//! `s.parse::<T>()` of `x.to_string()` always gives back `x`.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a unit string could not be parsed.
///
/// Every variant carries the offending text (cut to a readable length) so that a scenario
/// author sees what was wrong and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The text is not a number followed by one of the accepted units.
    #[error("expected {expected}, got {got:?} ({units})")]
    Malformed {
        /// What was expected, with examples, e.g. `a duration like "25ms" or "1.5s"`.
        expected: &'static str,
        /// The accepted units, e.g. `units: ns, us, ms, s, min`.
        units: &'static str,
        /// The offending text.
        got: String,
    },
    /// The decimal value is not a whole number of the base unit (e.g. `"0.5ns"`).
    #[error("{quantity} {got:?} is not a whole number of {base_unit}")]
    Inexact {
        /// The kind of quantity: `duration`, `rate` or `size`.
        quantity: &'static str,
        /// The base unit that the value must be a whole number of, e.g. `nanoseconds`.
        base_unit: &'static str,
        /// The offending text.
        got: String,
    },
    /// The value does not fit in 64 bits of the base unit.
    #[error("{quantity} {got:?} is too large (at most {max} {base_unit})")]
    Overflow {
        /// The kind of quantity: `duration`, `rate` or `size`.
        quantity: &'static str,
        /// The base unit, e.g. `nanoseconds`.
        base_unit: &'static str,
        /// The largest representable value in the base unit (`u64::MAX`).
        max: u64,
        /// The offending text.
        got: String,
    },
    /// A negative integer was given where a non-negative count of the base unit was expected
    /// (only reachable through deserialization of a bare integer).
    #[error("{quantity} must not be negative, got {got}")]
    Negative {
        /// The kind of quantity: `duration`, `rate` or `size`.
        quantity: &'static str,
        /// The offending value.
        got: i64,
    },
}

/// Longest piece of offending input quoted back in an error message, in characters.
const MAX_QUOTED_CHARS: usize = 64;

/// The offending text for an error message, cut at a character boundary if it is long.
fn quote(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// How to read and print one kind of quantity.
struct Spec {
    /// Kind of quantity, for messages.
    quantity: &'static str,
    /// Base unit spelled out, for messages.
    base_unit: &'static str,
    /// What a valid string looks like, for messages.
    expected: &'static str,
    /// The accepted units, for messages.
    units_help: &'static str,
    /// Unit suffix → multiplier to the base unit. Matched exactly (case-sensitive).
    units: &'static [(&'static str, u64)],
    /// Units used for printing, from the largest multiplier to the smallest (the last one
    /// must have multiplier 1), and the unit used to print zero.
    display_units: &'static [(&'static str, u64)],
    /// How zero is printed.
    zero: &'static str,
}

const NS_PER_US: u64 = 1_000;
const NS_PER_MS: u64 = 1_000_000;
const NS_PER_S: u64 = 1_000_000_000;
const NS_PER_MIN: u64 = 60 * NS_PER_S;

const DURATION: Spec = Spec {
    quantity: "duration",
    base_unit: "nanoseconds",
    expected: r#"a duration like "25ms" or "1.5s""#,
    units_help: "units: ns, us, µs, ms, s, min",
    units: &[
        ("ns", 1),
        ("us", NS_PER_US),
        ("\u{b5}s", NS_PER_US),  // MICRO SIGN
        ("\u{3bc}s", NS_PER_US), // GREEK SMALL LETTER MU
        ("ms", NS_PER_MS),
        ("s", NS_PER_S),
        ("min", NS_PER_MIN),
    ],
    display_units: &[("min", NS_PER_MIN), ("s", NS_PER_S), ("ms", NS_PER_MS), ("us", NS_PER_US), ("ns", 1)],
    zero: "0s",
};

const BPS_PER_KBPS: u64 = 1_000;
const BPS_PER_MBPS: u64 = 1_000_000;
const BPS_PER_GBPS: u64 = 1_000_000_000;

const RATE: Spec = Spec {
    quantity: "rate",
    base_unit: "bits per second",
    expected: r#"a rate like "10Mbps" or "1638.4kbps""#,
    units_help: "units: bps, kbps, Mbps, Gbps; the prefix may be either case, \"bps\" is lower case",
    units: &[
        ("bps", 1),
        ("kbps", BPS_PER_KBPS),
        ("Kbps", BPS_PER_KBPS),
        ("mbps", BPS_PER_MBPS),
        ("Mbps", BPS_PER_MBPS),
        ("gbps", BPS_PER_GBPS),
        ("Gbps", BPS_PER_GBPS),
    ],
    display_units: &[("Gbps", BPS_PER_GBPS), ("Mbps", BPS_PER_MBPS), ("kbps", BPS_PER_KBPS), ("bps", 1)],
    zero: "0bps",
};

const KB: u64 = 1_000;
const MB: u64 = 1_000_000;
const GB: u64 = 1_000_000_000;
const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

const SIZE: Spec = Spec {
    quantity: "size",
    base_unit: "bytes",
    expected: r#"a size like "1500B", "64KiB" or "1.5MB""#,
    units_help: "units: B, KB, MB, GB (powers of 1000), KiB, MiB, GiB (powers of 1024)",
    units: &[("B", 1), ("KB", KB), ("kB", KB), ("MB", MB), ("GB", GB), ("KiB", KIB), ("MiB", MIB), ("GiB", GIB)],
    display_units: &[("GiB", GIB), ("GB", GB), ("MiB", MIB), ("MB", MB), ("KiB", KIB), ("KB", KB), ("B", 1)],
    zero: "0B",
};

/// After removing trailing zeros, a fraction longer than this can never give a whole number
/// of the base unit: that would need 2^31 or 5^31 in a multiplier, and the largest powers in
/// any multiplier above are 2^30 (GiB) and 5^10 (min).
const MAX_SIGNIFICANT_FRACTION_DIGITS: usize = 30;

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let r = a % b;
        a = b;
        b = r;
    }
    a
}

impl Spec {
    fn malformed(&self, text: &str) -> UnitError {
        UnitError::Malformed { expected: self.expected, units: self.units_help, got: quote(text) }
    }

    fn overflow(&self, text: &str) -> UnitError {
        UnitError::Overflow { quantity: self.quantity, base_unit: self.base_unit, max: u64::MAX, got: quote(text) }
    }

    /// Parses `text` into a whole number of the base unit.
    // `u128::is_multiple_of` needs Rust 1.87; the workspace declares rust-version 1.80.
    #[allow(unknown_lints, clippy::manual_is_multiple_of)]
    fn parse(&self, text: &str) -> Result<u64, UnitError> {
        let trimmed = text.trim();
        // The number: ASCII digits with at most one '.', which must have digits on both sides.
        let number_len = trimmed.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
        // `number_len` counts ASCII bytes only, so it is a character boundary.
        let (number, rest) = trimmed.split_at(number_len);
        let unit = rest.trim_start();
        let multiplier =
            self.units.iter().find(|(name, _)| *name == unit).map(|(_, m)| *m).ok_or_else(|| self.malformed(text))?;
        let (int_digits, frac_digits) = match number.split_once('.') {
            Some((i, f)) => (i, f),
            None => (number, ""),
        };
        if int_digits.is_empty() || (number.contains('.') && frac_digits.is_empty()) || frac_digits.contains('.') {
            return Err(self.malformed(text));
        }
        let multiplier = u128::from(multiplier);

        // Integer part times the multiplier.
        let mut int_value: u128 = 0;
        for b in int_digits.bytes() {
            int_value = int_value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u128::from(b - b'0')))
                .ok_or_else(|| self.overflow(text))?;
        }
        let int_part = int_value.checked_mul(multiplier).ok_or_else(|| self.overflow(text))?;

        // Fraction F / 10^k times the multiplier m must be a whole number. With
        // g = gcd(10^k, m) and d = 10^k / g, that holds iff d divides F, and then the
        // result is (F / d) * (m / g), which stays below m^2 and cannot overflow a u128.
        let significant = frac_digits.trim_end_matches('0');
        let frac_part = if significant.is_empty() {
            0
        } else {
            let inexact =
                || UnitError::Inexact { quantity: self.quantity, base_unit: self.base_unit, got: quote(text) };
            if significant.len() > MAX_SIGNIFICANT_FRACTION_DIGITS {
                return Err(inexact());
            }
            let mut frac: u128 = 0;
            let mut scale: u128 = 1;
            for b in significant.bytes() {
                // At most 30 digits: 10^30 < 2^100, no overflow possible.
                frac = frac * 10 + u128::from(b - b'0');
                scale *= 10;
            }
            let g = gcd(scale, multiplier);
            let d = scale / g;
            if frac % d != 0 {
                return Err(inexact());
            }
            (frac / d) * (multiplier / g)
        };

        int_part.checked_add(frac_part).and_then(|v| u64::try_from(v).ok()).ok_or_else(|| self.overflow(text))
    }

    /// Writes `value` (in the base unit) in canonical form.
    #[allow(unknown_lints, clippy::manual_is_multiple_of)] // see `parse`
    fn fmt(&self, value: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if value == 0 {
            return f.write_str(self.zero);
        }
        for (name, multiplier) in self.display_units {
            if value % multiplier == 0 {
                return write!(f, "{}{}", value / multiplier, name);
            }
        }
        // Unreachable because the last display unit has multiplier 1; kept total anyway.
        write!(f, "{value}")
    }
}

/// A deserialization visitor for one quantity: a unit string or a bare non-negative integer.
struct QuantityVisitor(&'static Spec);

impl<'de> Visitor<'de> for QuantityVisitor {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}), or a non-negative integer number of {}",
            self.0.expected, self.0.units_help, self.0.base_unit
        )
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
        self.0.parse(v).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        Ok(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        u64::try_from(v).map_err(|_| E::custom(UnitError::Negative { quantity: self.0.quantity, got: v }))
    }
}

macro_rules! quantity_newtype {
    (
        $(#[$meta:meta])*
        $name:ident, $spec:ident, $getter:ident, $getter_doc:literal
    ) => {
        $(#[$meta])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u64);

        impl $name {
            #[doc = $getter_doc]
            pub const fn $getter(self) -> u64 {
                self.0
            }
        }

        impl FromStr for $name {
            type Err = UnitError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $spec.parse(s).map($name)
            }
        }

        impl fmt::Display for $name {
            /// Canonical form: an integer in the largest unit that divides the value exactly.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                $spec.fmt(self.0, f)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_any(QuantityVisitor(&$spec)).map($name)
            }
        }
    };
}

quantity_newtype!(
    /// A span of simulated time in nanoseconds.
    ///
    /// Strings use the units `ns`, `us` (or `µs`), `ms`, `s` and `min`, with decimals allowed
    /// when the result is a whole number of nanoseconds: `"25ms"`, `"1.5s"`, `"0.1ms"`,
    /// `"250 us"`. A bare integer means nanoseconds. See the [module docs](self).
    Duration, DURATION, as_ns, "The duration in nanoseconds."
);

quantity_newtype!(
    /// A data rate in bits per second (decimal SI prefixes: 1 kbps = 1000 bps).
    ///
    /// Strings use `bps`, `kbps`, `Mbps`, `Gbps`; the prefix may be in either case (`Kbps`,
    /// `mbps`), but `bps` itself must be lower case, so that `"MBps"` (bytes?) is rejected
    /// rather than guessed. Decimals are allowed when exact: `"1638.4kbps"` is 1 638 400 bps.
    /// A bare integer means bits per second. See the [module docs](self).
    Rate, RATE, as_bps, "The rate in bits per second."
);

quantity_newtype!(
    /// An amount of data in bytes.
    ///
    /// Strings use `B`, `KB` (or `kB`), `MB`, `GB` (powers of 1000) and `KiB`, `MiB`, `GiB`
    /// (powers of 1024). Decimals are allowed when exact: `"1.5KiB"` is 1536 bytes,
    /// `"1.0001KB"` is an error. A bare integer means bytes. See the [module docs](self).
    Size, SIZE, as_bytes, "The size in bytes."
);

impl Duration {
    /// Zero time.
    pub const ZERO: Duration = Duration(0);

    /// A duration of `ns` nanoseconds.
    pub const fn from_ns(ns: u64) -> Self {
        Duration(ns)
    }

    /// A duration of `us` microseconds, saturating at `u64::MAX` nanoseconds.
    pub const fn from_us(us: u64) -> Self {
        Duration(us.saturating_mul(NS_PER_US))
    }

    /// A duration of `ms` milliseconds, saturating at `u64::MAX` nanoseconds.
    pub const fn from_ms(ms: u64) -> Self {
        Duration(ms.saturating_mul(NS_PER_MS))
    }

    /// A duration of `secs` seconds, saturating at `u64::MAX` nanoseconds.
    pub const fn from_secs(secs: u64) -> Self {
        Duration(secs.saturating_mul(NS_PER_S))
    }

    /// A duration of `mins` minutes, saturating at `u64::MAX` nanoseconds.
    pub const fn from_mins(mins: u64) -> Self {
        Duration(mins.saturating_mul(NS_PER_MIN))
    }
}

impl Rate {
    /// A rate of `bps` bits per second.
    pub const fn from_bps(bps: u64) -> Self {
        Rate(bps)
    }

    /// A rate of `kbps` × 1000 bits per second, saturating at `u64::MAX` bps.
    pub const fn from_kbps(kbps: u64) -> Self {
        Rate(kbps.saturating_mul(BPS_PER_KBPS))
    }

    /// A rate of `mbps` × 10^6 bits per second, saturating at `u64::MAX` bps.
    pub const fn from_mbps(mbps: u64) -> Self {
        Rate(mbps.saturating_mul(BPS_PER_MBPS))
    }

    /// A rate of `gbps` × 10^9 bits per second, saturating at `u64::MAX` bps.
    pub const fn from_gbps(gbps: u64) -> Self {
        Rate(gbps.saturating_mul(BPS_PER_GBPS))
    }
}

/// A rate and a one-way delay written `RATE/DELAY`, e.g. `2Mbps/25ms` (the command line's
/// `--setting`). Whitespace around either part is allowed.
pub fn parse_rate_delay(s: &str) -> Result<(Rate, Duration), String> {
    let (r, d) = s.split_once('/').ok_or_else(|| format!("expected RATE/OWD such as 2Mbps/25ms, got {s:?}"))?;
    let rate = r.trim().parse::<Rate>().map_err(|e| format!("rate: {e}"))?;
    let owd = d.trim().parse::<Duration>().map_err(|e| format!("one-way delay: {e}"))?;
    Ok((rate, owd))
}

/// A probability in `[0, max]`, written `0.05` or `5%` (the command line's `--loss`). NaN,
/// infinities and values outside the range are errors; `-0` reads as 0.
pub fn parse_probability(s: &str, max: f64) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(p) => (p.trim(), 100.0),
        None => (t, 1.0),
    };
    let v = num.parse::<f64>().map_err(|_| format!("expected a probability such as 0.05 or 5%, got {s:?}"))? / scale;
    if !(0.0..=max).contains(&v) {
        return Err(format!("expected a probability in [0, {max}] (or 0% to {}%), got {s:?}", max * 100.0));
    }
    Ok(v + 0.0)
}

impl Size {
    /// A size of `bytes` bytes.
    pub const fn from_bytes(bytes: u64) -> Self {
        Size(bytes)
    }

    /// A size of `kb` × 1000 bytes, saturating at `u64::MAX` bytes.
    pub const fn from_kb(kb: u64) -> Self {
        Size(kb.saturating_mul(KB))
    }

    /// A size of `mb` × 10^6 bytes, saturating at `u64::MAX` bytes.
    pub const fn from_mb(mb: u64) -> Self {
        Size(mb.saturating_mul(MB))
    }

    /// A size of `gb` × 10^9 bytes, saturating at `u64::MAX` bytes.
    pub const fn from_gb(gb: u64) -> Self {
        Size(gb.saturating_mul(GB))
    }

    /// A size of `kib` × 1024 bytes, saturating at `u64::MAX` bytes.
    pub const fn from_kib(kib: u64) -> Self {
        Size(kib.saturating_mul(KIB))
    }

    /// A size of `mib` × 2^20 bytes, saturating at `u64::MAX` bytes.
    pub const fn from_mib(mib: u64) -> Self {
        Size(mib.saturating_mul(MIB))
    }

    /// A size of `gib` × 2^30 bytes, saturating at `u64::MAX` bytes.
    pub const fn from_gib(gib: u64) -> Self {
        Size(gib.saturating_mul(GIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_settings_and_probabilities() {
        assert_eq!(parse_rate_delay(" 10 Gbps / 1 ms "), Ok((Rate::from_gbps(10), Duration::from_ms(1))));
        assert!(parse_rate_delay("10Gbps").unwrap_err().contains("RATE/OWD"));
        assert!(parse_rate_delay("10/1ms").unwrap_err().starts_with("rate: "));
        assert_eq!(parse_probability("5%", 0.5), Ok(0.05));
        assert_eq!(parse_probability("1", 1.0), Ok(1.0));
        let z = parse_probability("-0", 0.5).unwrap();
        assert!(z == 0.0 && z.is_sign_positive());
        for bad in ["nan", "inf", "-0.1", "0.6", "60%", "", "%"] {
            assert!(parse_probability(bad, 0.5).is_err(), "{bad}");
        }
    }
    use proptest::prelude::*;

    #[test]
    fn durations_parse_to_hand_checked_values() {
        let table: &[(&str, u64)] = &[
            ("0ns", 0),
            ("0s", 0),
            ("1ns", 1),
            ("7ns", 7),
            ("1us", 1_000),
            ("1µs", 1_000),
            ("1μs", 1_000),
            ("250us", 250_000),
            ("25ms", 25_000_000),
            ("0.1ms", 100_000),
            ("1.5s", 1_500_000_000),
            ("1.500s", 1_500_000_000),
            ("2s", 2_000_000_000),
            ("1min", 60_000_000_000),
            ("1.5min", 90_000_000_000),
            ("25 ms", 25_000_000),
            ("  25ms  ", 25_000_000),
            ("25\tms", 25_000_000),
            ("0.000000001s", 1),
            ("1.000000000s", 1_000_000_000),
            ("007ms", 7_000_000),
            ("18446744073709551615ns", u64::MAX),
            ("18446744073.709551615s", u64::MAX),
        ];
        for &(text, ns) in table {
            assert_eq!(text.parse::<Duration>(), Ok(Duration(ns)), "parsing {text:?}");
        }
    }

    #[test]
    fn rates_parse_to_hand_checked_values() {
        let table: &[(&str, u64)] = &[
            ("0bps", 0),
            ("1bps", 1),
            ("400kbps", 400_000),
            ("400Kbps", 400_000),
            ("1638.4kbps", 1_638_400),
            ("1.44Mbps", 1_440_000),
            ("1.44mbps", 1_440_000),
            ("8.1 Mbps", 8_100_000),
            ("10Gbps", 10_000_000_000),
            ("10gbps", 10_000_000_000),
            ("0.5kbps", 500),
            ("18446744073709551615bps", u64::MAX),
        ];
        for &(text, bps) in table {
            assert_eq!(text.parse::<Rate>(), Ok(Rate(bps)), "parsing {text:?}");
        }
    }

    #[test]
    fn sizes_parse_to_hand_checked_values() {
        let table: &[(&str, u64)] = &[
            ("0B", 0),
            ("1500B", 1500),
            ("1500 B", 1500),
            ("1KB", 1000),
            ("1kB", 1000),
            ("1.5KB", 1500),
            ("1KiB", 1024),
            ("1.5KiB", 1536),
            ("64KiB", 65_536),
            ("1MB", 1_000_000),
            ("1MiB", 1_048_576),
            ("0.5MiB", 524_288),
            ("1GB", 1_000_000_000),
            ("1GiB", 1_073_741_824),
            // 2^-30 GiB is exactly one byte and needs all 30 decimal places.
            ("0.000000000931322574615478515625GiB", 1),
            ("17179869183.999999999068677425384521484375GiB", u64::MAX),
        ];
        for &(text, bytes) in table {
            assert_eq!(text.parse::<Size>(), Ok(Size(bytes)), "parsing {text:?}");
        }
    }

    #[test]
    fn duration_error_names_the_text_and_what_was_expected() {
        let err = "25 parsecs".parse::<Duration>().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(r#"expected a duration like "25ms" or "1.5s", got "25 parsecs""#), "{msg}");
        assert!(msg.contains("ms"), "{msg}");
    }

    #[test]
    fn malformed_strings_are_rejected() {
        for text in [
            "", " ", "ms", "25", "25 ", "-25ms", "+25ms", "25msx", "25 m s", "1.5.0s", ".5s", "5.s", "1e3ms", "25MS",
            "25 sec", "0x10ns", "25ms 3", "２５ms", "1,5s", "NaN s",
        ] {
            assert!(
                matches!(text.parse::<Duration>(), Err(UnitError::Malformed { .. })),
                "{text:?} should be malformed, got {:?}",
                text.parse::<Duration>()
            );
        }
        for text in ["", "10", "10Mb", "10MBps", "10 Mbit/s", "10BPS", "10Mbps/s", "10 Tbps"] {
            assert!(matches!(text.parse::<Rate>(), Err(UnitError::Malformed { .. })), "{text:?} should be malformed");
        }
        for text in ["", "10", "10b", "10kb", "10KIB", "10kiB", "10 TB", "10 bytes"] {
            assert!(matches!(text.parse::<Size>(), Err(UnitError::Malformed { .. })), "{text:?} should be malformed");
        }
    }

    #[test]
    fn inexact_decimals_are_rejected() {
        for text in ["0.5ns", "0.001ns", "1.0000000001s", "0.0000000001s"] {
            let err = text.parse::<Duration>().unwrap_err();
            assert!(matches!(err, UnitError::Inexact { .. }), "{text:?}: {err:?}");
            assert!(err.to_string().contains("nanoseconds"), "{err}");
        }
        assert!(matches!("0.5bps".parse::<Rate>(), Err(UnitError::Inexact { .. })));
        assert!(matches!("1.0001KB".parse::<Size>(), Err(UnitError::Inexact { .. })));
        assert!(matches!("1.5B".parse::<Size>(), Err(UnitError::Inexact { .. })));
        let long = format!("1.{}1GiB", "0".repeat(100));
        assert!(matches!(long.parse::<Size>(), Err(UnitError::Inexact { .. })));
        // Trailing zeros are not significant, however many.
        let zeros = format!("1.{}s", "0".repeat(100));
        assert_eq!(zeros.parse::<Duration>(), Ok(Duration::from_secs(1)));
    }

    #[test]
    fn overflow_is_an_error() {
        for text in [
            "18446744073709551616ns",
            "18446744074s",
            "307445734562min",
            "99999999999999999999999999999999999999999999999999ms",
            "18446744073.7095516151s",
        ] {
            let err = text.parse::<Duration>();
            assert!(
                matches!(err, Err(UnitError::Overflow { .. }) | Err(UnitError::Inexact { .. })),
                "{text:?}: {err:?}"
            );
        }
        assert!(matches!("18446744073709551616ns".parse::<Duration>(), Err(UnitError::Overflow { .. })));
        assert!(matches!("18446744074Gbps".parse::<Rate>(), Err(UnitError::Overflow { .. })));
        assert!(matches!("17179869184GiB".parse::<Size>(), Err(UnitError::Overflow { .. })));
        let msg = "18446744074s".parse::<Duration>().unwrap_err().to_string();
        assert!(msg.contains("too large") && msg.contains("18446744074s"), "{msg}");
    }

    #[test]
    fn long_offending_text_is_cut_in_messages() {
        let text = "é".repeat(1000);
        let msg = text.parse::<Size>().unwrap_err().to_string();
        assert!(msg.len() < 400, "{msg}");
        assert!(msg.contains('…'));
    }

    #[test]
    fn display_is_canonical() {
        let cases: &[(Duration, &str)] = &[
            (Duration(0), "0s"),
            (Duration(1), "1ns"),
            (Duration(1_500), "1500ns"),
            (Duration::from_us(250), "250us"),
            (Duration::from_ms(25), "25ms"),
            (Duration(1_500_000_000), "1500ms"),
            (Duration::from_secs(2), "2s"),
            (Duration::from_secs(90), "90s"),
            (Duration::from_secs(120), "2min"),
            (Duration(u64::MAX), "18446744073709551615ns"),
        ];
        for (d, s) in cases {
            assert_eq!(d.to_string(), *s);
        }
        assert_eq!(Rate(0).to_string(), "0bps");
        assert_eq!(Rate(1_638_400).to_string(), "1638400bps");
        assert_eq!(Rate::from_kbps(400).to_string(), "400kbps");
        assert_eq!(Rate::from_mbps(12).to_string(), "12Mbps");
        assert_eq!(Rate::from_gbps(10).to_string(), "10Gbps");
        assert_eq!(Size(0).to_string(), "0B");
        assert_eq!(Size(1500).to_string(), "1500B");
        assert_eq!(Size(1536).to_string(), "1536B");
        assert_eq!(Size::from_kib(64).to_string(), "64KiB");
        assert_eq!(Size::from_kb(64).to_string(), "64KB");
        assert_eq!(Size::from_mib(3).to_string(), "3MiB");
        assert_eq!(Size::from_mb(3).to_string(), "3MB");
        assert_eq!(Size::from_gib(1).to_string(), "1GiB");
        assert_eq!(Size::from_gb(2).to_string(), "2GB");
    }

    #[test]
    fn constructors_and_getters() {
        assert_eq!(Duration::from_ns(5).as_ns(), 5);
        assert_eq!(Duration::from_us(5).as_ns(), 5_000);
        assert_eq!(Duration::from_ms(5).as_ns(), 5_000_000);
        assert_eq!(Duration::from_secs(5).as_ns(), 5_000_000_000);
        assert_eq!(Duration::from_mins(1).as_ns(), 60_000_000_000);
        assert_eq!(Duration::from_ms(u64::MAX).as_ns(), u64::MAX);
        assert_eq!(Duration::ZERO, Duration::default());
        assert_eq!(Rate::from_bps(7).as_bps(), 7);
        assert_eq!(Rate::from_gbps(u64::MAX).as_bps(), u64::MAX);
        assert_eq!(Size::from_bytes(9).as_bytes(), 9);
        assert_eq!(Size::from_gib(u64::MAX).as_bytes(), u64::MAX);
        assert!(Duration::from_ms(1) < Duration::from_secs(1));
    }

    #[derive(Debug, PartialEq, Deserialize, Serialize)]
    #[serde(deny_unknown_fields)]
    struct LinkSpec {
        delay: Duration,
        rate: Rate,
        buffer: Size,
    }

    #[test]
    fn deserializes_inside_a_toml_struct() {
        let spec: LinkSpec = toml::from_str(
            r#"
            delay = "25ms"
            rate = "1638.4kbps"
            buffer = "64KiB"
            "#,
        )
        .unwrap();
        assert_eq!(spec, LinkSpec { delay: Duration::from_ms(25), rate: Rate(1_638_400), buffer: Size(65_536) });

        // Bare integers are the base unit.
        let spec: LinkSpec = toml::from_str("delay = 25000000\nrate = 1000000\nbuffer = 1500\n").unwrap();
        assert_eq!(spec.delay, Duration::from_ms(25));
        assert_eq!(spec.rate, Rate::from_mbps(1));
        assert_eq!(spec.buffer, Size(1500));

        // Serialization uses the canonical strings and reads back the same.
        let text = toml::to_string(&spec).unwrap();
        assert!(text.contains(r#"delay = "25ms""#), "{text}");
        assert_eq!(toml::from_str::<LinkSpec>(&text).unwrap(), spec);
    }

    #[test]
    fn toml_errors_are_helpful() {
        let err = toml::from_str::<LinkSpec>("delay = \"25 parsecs\"\nrate = \"1Mbps\"\nbuffer = \"1B\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains(r#"expected a duration like "25ms" or "1.5s", got "25 parsecs""#), "{err}");

        let err =
            toml::from_str::<LinkSpec>("delay = -5\nrate = \"1Mbps\"\nbuffer = \"1B\"\n").unwrap_err().to_string();
        assert!(err.contains("must not be negative"), "{err}");

        let err =
            toml::from_str::<LinkSpec>("delay = 1.5\nrate = \"1Mbps\"\nbuffer = \"1B\"\n").unwrap_err().to_string();
        assert!(err.contains("nanoseconds"), "{err}");

        let err = toml::from_str::<LinkSpec>("delay = \"1ms\"\nrate = \"1Mbps\"\nbuffer = \"1B\"\nlatency = \"1ms\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field"), "{err}");
    }

    #[test]
    fn json_round_trip() {
        let d: Duration = serde_json::from_str("\"1.5s\"").unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), "\"1500ms\"");
        let r: Rate = serde_json::from_str("1000").unwrap();
        assert_eq!(r, Rate::from_kbps(1));
        assert!(serde_json::from_str::<Size>("-1").is_err());
    }

    proptest! {
        #[test]
        fn duration_display_round_trips(ns in any::<u64>()) {
            let d = Duration(ns);
            prop_assert_eq!(d.to_string().parse::<Duration>(), Ok(d));
        }

        #[test]
        fn rate_display_round_trips(bps in any::<u64>()) {
            let r = Rate(bps);
            prop_assert_eq!(r.to_string().parse::<Rate>(), Ok(r));
        }

        #[test]
        fn size_display_round_trips(bytes in any::<u64>()) {
            let s = Size(bytes);
            prop_assert_eq!(s.to_string().parse::<Size>(), Ok(s));
        }

        #[test]
        fn round_values_round_trip(n in 0u64..1_000_000, shift in 0usize..7) {
            let scales = [1, 1_000, 1_000_000, 1_000_000_000, 60_000_000_000, 1 << 10, 1 << 30];
            let v = n * scales[shift];
            prop_assert_eq!(Duration(v).to_string().parse::<Duration>(), Ok(Duration(v)));
            prop_assert_eq!(Rate(v).to_string().parse::<Rate>(), Ok(Rate(v)));
            prop_assert_eq!(Size(v).to_string().parse::<Size>(), Ok(Size(v)));
        }

        #[test]
        fn arbitrary_strings_never_panic(s in any::<String>()) {
            let _ = s.parse::<Duration>();
            let _ = s.parse::<Rate>();
            let _ = s.parse::<Size>();
        }

        #[test]
        fn number_like_strings_never_panic(
            s in "[ 0-9.]{0,45}(ns|us|µs|ms|s|min|bps|kbps|Mbps|B|KiB|GiB|x)?"
        ) {
            for r in [s.parse::<Duration>().map(|d| d.0),
                      s.parse::<Rate>().map(|r| r.0),
                      s.parse::<Size>().map(|b| b.0)] {
                if let Err(e) = r {
                    // Every error renders.
                    prop_assert!(!e.to_string().is_empty());
                }
            }
        }

        #[test]
        fn decimal_milliseconds_are_exact(whole in 0u64..1_000_000, frac in 0u64..1_000_000) {
            let text = format!("{whole}.{frac:06}ms");
            prop_assert_eq!(
                text.parse::<Duration>(),
                Ok(Duration(whole * 1_000_000 + frac))
            );
        }
    }
}
