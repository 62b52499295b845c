//! Packet loss on a link: none, independent (Bernoulli), bursty (Gilbert–Elliott), or the
//! packets at given positions (a list, to replay the losses of a logged run).
//!
//! [`LossModel`] is the configuration as written in a scenario file:
//!
//! ```toml
//! [link.loss]
//! kind = "gilbert_elliott"
//! p_good_to_bad = 0.01
//! p_bad_to_good = 0.25
//! loss_good = 0.0
//! loss_bad = 1.0
//! ```
//!
//! [`LossProcess`] runs a model with its own seeded random stream (see
//! [`component_rng`](crate::rng::component_rng)) and answers, once per packet, whether that
//! packet is dropped.
//!
//! The Gilbert–Elliott channel (Gilbert 1960, Elliott 1963) is a two-state Markov chain
//! evaluated once per packet. Its stationary probability of the bad state is
//! `π_B = p_good_to_bad / (p_good_to_bad + p_bad_to_good)`, so the long-run loss rate is
//! `π_B · loss_bad + (1 − π_B) · loss_good`, and with `loss_bad = 1`, `loss_good = 0` the
//! mean loss-burst length is `1 / p_bad_to_good` packets.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// A configured model is invalid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LossModelError {
    /// A probability is outside `[0, 1]` or not a number.
    #[error("{model} loss model: `{field}` must be a probability in [0, 1], got {value}")]
    NotAProbability {
        /// The model's `kind`, e.g. `gilbert_elliott`.
        model: &'static str,
        /// The offending field, e.g. `loss_bad`.
        field: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A list's positions do not strictly increase.
    #[error("list loss model: `lost` must list packet positions in increasing order, each once; lost[{index}] = {value} follows {previous}")]
    NotIncreasing {
        /// Index in `lost` of the first position not above the one before.
        index: usize,
        /// That position.
        value: u64,
        /// The position before it.
        previous: u64,
    },
}

/// How a link loses packets, as configured in a scenario file.
///
/// Deserializes from a table with a `kind` tag (`"none"`, `"bernoulli"`,
/// `"gilbert_elliott"`, `"list"`) and exactly that variant's fields; unknown fields are errors, and every
/// probability is checked to lie in `[0, 1]` (the error names the field).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", try_from = "LossModelSpec")]
pub enum LossModel {
    /// No random loss.
    #[default]
    None,
    /// Each packet is lost independently with probability `loss_prob`.
    Bernoulli {
        /// Probability that a packet is lost, in `[0, 1]`.
        loss_prob: f64,
    },
    /// Two-state Markov loss (Gilbert–Elliott): bursty loss.
    ///
    /// Per packet, the state first moves (good → bad with `p_good_to_bad`, bad → good with
    /// `p_bad_to_good`), then the packet is lost with the new state's loss probability.
    GilbertElliott {
        /// Per-packet probability of moving from the good to the bad state, in `[0, 1]`.
        p_good_to_bad: f64,
        /// Per-packet probability of moving from the bad to the good state, in `[0, 1]`.
        p_bad_to_good: f64,
        /// Loss probability in the good state, in `[0, 1]`.
        loss_good: f64,
        /// Loss probability in the bad state, in `[0, 1]`.
        loss_bad: f64,
    },
    /// The packets at these positions are lost, and no others: positions count from 0 in
    /// the order packets finish serialization on the link (every packet counts: SYNs,
    /// ACKs, retransmissions), in increasing order. This replays a run whose losses were
    /// logged, such as a link emulator's beside a real TCP or QUIC stack, so that both
    /// meet the same losses (ns-3's `ListErrorModel` does the same by packet uid). Draws
    /// nothing from the random stream.
    List {
        /// 0-based positions of the lost packets, strictly increasing.
        lost: Vec<u64>,
    },
}

/// The unvalidated mirror of [`LossModel`] that serde reads first: a flat table (not an
/// internally tagged enum, which serde buffers and whose errors then have no position; see
/// `scenario_fields`), checked against its `kind` in `TryFrom`.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    // The same text as `scenario_fields::LOSS_FORMS`, which matches on it.
    expecting = "a table: { kind = \"none\" }, { kind = \"bernoulli\", loss_prob = 0.02 }, { kind = \"gilbert_elliott\", p_good_to_bad = 0.01, p_bad_to_good = 0.3, loss_good = 0.0, loss_bad = 0.5 } or { kind = \"list\", lost = [3, 17] }"
)]
struct LossModelSpec {
    kind: Option<LossKind>,
    loss_prob: Option<Probability>,
    p_good_to_bad: Option<Probability>,
    p_bad_to_good: Option<Probability>,
    loss_good: Option<Probability>,
    loss_bad: Option<Probability>,
    lost: Option<Vec<u64>>,
}

#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum LossKind {
    None,
    Bernoulli,
    GilbertElliott,
    List,
}

/// A probability as a scenario writes it: a number in `[0, 1]` (`0.05`) or a percentage
/// string (`"5%"`, read as 0.05). Anything else is an error at the value, saying both forms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probability(pub f64);

const PROBABILITY_FORMS: &str = "a probability: a number in [0, 1] such as 0.05, or a percentage such as \"5%\"";

impl<'de> Deserialize<'de> for Probability {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Probability;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(PROBABILITY_FORMS)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Probability, E> {
                if (0.0..=1.0).contains(&v) {
                    Ok(Probability(v))
                } else {
                    Err(E::custom(format!("expected {PROBABILITY_FORMS}, got {v}")))
                }
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Probability, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Probability, E> {
                self.visit_f64(v as f64)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Probability, E> {
                let pct = v.trim().strip_suffix('%').and_then(|n| n.trim().parse::<f64>().ok());
                match pct {
                    Some(p) if (0.0..=100.0).contains(&p) => Ok(Probability(p / 100.0)),
                    _ => Err(E::custom(format!("expected {PROBABILITY_FORMS}, got {v:?}"))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl TryFrom<LossModelSpec> for LossModel {
    type Error = String;

    fn try_from(s: LossModelSpec) -> Result<Self, String> {
        let set = |name: &'static str, p: &Option<Probability>| (name, p.is_some());
        let only = |fields: &[(&str, bool)], kind: &str| match fields.iter().find(|f| f.1) {
            Some((f, _)) => Err(format!("{f}: only applies to kind = \"{kind}\"")),
            None => Ok(()),
        };
        let need = |name: &str, kind: &str, p: Option<Probability>| {
            p.map(|p| p.0).ok_or_else(|| format!("{name}: missing; kind = \"{kind}\" needs it"))
        };
        let bernoulli = [set("loss_prob", &s.loss_prob)];
        let ge = [
            set("p_good_to_bad", &s.p_good_to_bad),
            set("p_bad_to_good", &s.p_bad_to_good),
            set("loss_good", &s.loss_good),
            set("loss_bad", &s.loss_bad),
        ];
        let list = [("lost", s.lost.is_some())];
        let model = match s.kind {
            None => {
                return Err(format!(
                    "missing `kind`; expected {}",
                    "a table: { kind = \"none\" }, { kind = \"bernoulli\", loss_prob = 0.02 }, { kind = \"gilbert_elliott\", p_good_to_bad = 0.01, p_bad_to_good = 0.3, loss_good = 0.0, loss_bad = 0.5 } or { kind = \"list\", lost = [3, 17] }"
                ))
            }
            Some(LossKind::None) => {
                only(&bernoulli, "bernoulli")?;
                only(&ge, "gilbert_elliott")?;
                only(&list, "list")?;
                LossModel::None
            }
            Some(LossKind::Bernoulli) => {
                only(&ge, "gilbert_elliott")?;
                only(&list, "list")?;
                LossModel::Bernoulli { loss_prob: need("loss_prob", "bernoulli", s.loss_prob)? }
            }
            Some(LossKind::GilbertElliott) => {
                only(&bernoulli, "bernoulli")?;
                only(&list, "list")?;
                const GE: &str = "gilbert_elliott";
                LossModel::GilbertElliott {
                    p_good_to_bad: need("p_good_to_bad", GE, s.p_good_to_bad)?,
                    p_bad_to_good: need("p_bad_to_good", GE, s.p_bad_to_good)?,
                    loss_good: need("loss_good", GE, s.loss_good)?,
                    loss_bad: need("loss_bad", GE, s.loss_bad)?,
                }
            }
            Some(LossKind::List) => {
                only(&bernoulli, "bernoulli")?;
                only(&ge, "gilbert_elliott")?;
                LossModel::List { lost: s.lost.ok_or("lost: missing; kind = \"list\" needs it (0-based packet positions, e.g. [3, 17])")? }
            }
        };
        model.validate().map_err(|e| e.to_string())?;
        Ok(model)
    }
}

fn check(model: &'static str, field: &'static str, value: f64) -> Result<(), LossModelError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(LossModelError::NotAProbability { model, field, value })
    }
}

/// `p` forced into `[0, 1]`, NaN as 0.
fn clamp_prob(p: f64) -> f64 {
    if p.is_nan() {
        0.0
    } else {
        p.clamp(0.0, 1.0)
    }
}

impl LossModel {
    /// Checks that every probability lies in `[0, 1]` (NaN is rejected) and that a list's
    /// positions increase.
    ///
    /// Deserialization already does this; call it for models built in code.
    ///
    /// # Errors
    ///
    /// [`LossModelError::NotAProbability`] naming the first offending field,
    /// [`LossModelError::NotIncreasing`] at the first list position not above the one before.
    pub fn validate(&self) -> Result<(), LossModelError> {
        match *self {
            LossModel::List { ref lost } => match lost.windows(2).position(|w| w[1] <= w[0]) {
                Some(i) => Err(LossModelError::NotIncreasing { index: i + 1, value: lost[i + 1], previous: lost[i] }),
                None => Ok(()),
            },
            LossModel::None => Ok(()),
            LossModel::Bernoulli { loss_prob } => check("bernoulli", "loss_prob", loss_prob),
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
                const GE: &str = "gilbert_elliott";
                check(GE, "p_good_to_bad", p_good_to_bad)?;
                check(GE, "p_bad_to_good", p_bad_to_good)?;
                check(GE, "loss_good", loss_good)?;
                check(GE, "loss_bad", loss_bad)
            }
        }
    }

    /// The long-run fraction of packets lost.
    ///
    /// For Gilbert–Elliott, `π_B · loss_bad + (1 − π_B) · loss_good` with
    /// `π_B = p_good_to_bad / (p_good_to_bad + p_bad_to_good)`; if both transition
    /// probabilities are 0 the chain never leaves its initial (good) state and this is
    /// `loss_good`. Probabilities outside `[0, 1]` are clamped first, as in [`LossProcess`].
    /// A list loses nothing after its last position: 0 in the long run.
    pub fn mean_loss_prob(&self) -> f64 {
        match self.clamped() {
            LossModel::None | LossModel::List { .. } => 0.0,
            LossModel::Bernoulli { loss_prob } => loss_prob,
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
                let total = p_good_to_bad + p_bad_to_good;
                if total == 0.0 {
                    loss_good
                } else {
                    let pi_bad = p_good_to_bad / total;
                    pi_bad * loss_bad + (1.0 - pi_bad) * loss_good
                }
            }
        }
    }

    /// The same model with every probability clamped into `[0, 1]` (NaN becomes 0).
    fn clamped(&self) -> LossModel {
        match *self {
            LossModel::None => LossModel::None,
            LossModel::List { ref lost } => LossModel::List { lost: lost.clone() },
            LossModel::Bernoulli { loss_prob } => LossModel::Bernoulli { loss_prob: clamp_prob(loss_prob) },
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
                LossModel::GilbertElliott {
                    p_good_to_bad: clamp_prob(p_good_to_bad),
                    p_bad_to_good: clamp_prob(p_bad_to_good),
                    loss_good: clamp_prob(loss_good),
                    loss_bad: clamp_prob(loss_bad),
                }
            }
        }
    }
}

/// Counters of a [`LossProcess`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LossStats {
    /// Packets offered to [`LossProcess::should_drop`].
    pub packets_seen: u64,
    /// Packets for which it returned `true`.
    pub packets_dropped: u64,
}

impl LossStats {
    /// `packets_dropped / packets_seen`, or 0 before the first packet.
    pub fn loss_rate(&self) -> f64 {
        if self.packets_seen == 0 {
            0.0
        } else {
            self.packets_dropped as f64 / self.packets_seen as f64
        }
    }
}

/// A running loss model: decides, packet by packet, which packets a link drops.
///
/// Contract:
/// - Input: one call to [`should_drop`](Self::should_drop) per packet, in the order the
///   packets cross the link.
/// - Randomness: only the [`ChaCha8Rng`] given to [`new`](Self::new). `None` and `List` draw nothing,
///   `Bernoulli` draws one `f64` per packet, `GilbertElliott` exactly two per packet (the
///   state transition, then the loss) whatever the probabilities, so a run is reproducible
///   from the seed and the packet sequence alone.
/// - Gilbert–Elliott starts in the good state.
/// - Getters: [`stats`](Self::stats), [`model`](Self::model),
///   [`in_bad_state`](Self::in_bad_state).
#[derive(Debug, Clone)]
#[repr(C)]
pub struct LossProcess {
    // What every packet reads and counts first (`repr(C)` keeps the order), the random
    // stream (over 300 bytes) last. (A link without a loss model keeps none of this:
    // `Link` holds a process only for a model that can drop.)
    model: LossModel,
    stats: LossStats,
    bad: bool,
    /// A list's next position not yet passed.
    next: usize,
    rng: ChaCha8Rng,
}

/// `true` with probability `p` (for `p` in `[0, 1]`): one `f64` draw, uniform in `[0, 1)`.
fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
    rng.random::<f64>() < p
}

impl LossProcess {
    /// Runs `model` with the random stream `rng`.
    ///
    /// The model should be [validated](LossModel::validate) (deserialized models are);
    /// otherwise probabilities outside `[0, 1]` are clamped into it and NaN counts as 0, so
    /// this never panics.
    pub fn new(model: LossModel, rng: ChaCha8Rng) -> Self {
        LossProcess { model: model.clamped(), rng, bad: false, next: 0, stats: LossStats::default() }
    }

    /// Decides whether the next packet is dropped, and counts it.
    ///
    /// Gilbert–Elliott order: first the state transition for this packet (good → bad with
    /// `p_good_to_bad`, bad → good with `p_bad_to_good`), then the loss draw with the new
    /// state's probability. So the first packet already sees a possible move to the bad
    /// state, and a burst ends on the packet whose transition returns to good.
    #[inline(always)]
    pub fn should_drop(&mut self) -> bool {
        // Every packet-hop asks: the common answer (no loss model) without a call.
        let drop = match self.model {
            LossModel::None => false,
            _ => self.draw(),
        };
        self.stats.packets_seen = self.stats.packets_seen.saturating_add(1);
        if drop {
            self.stats.packets_dropped = self.stats.packets_dropped.saturating_add(1);
        }
        drop
    }

    /// The draw of a random model (see [`should_drop`](Self::should_drop)).
    #[inline(never)]
    fn draw(&mut self) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::List { ref lost } => {
                // Positions already passed (a list built in code need not be sorted) are
                // skipped; a validated list moves one step per loss.
                let at = self.stats.packets_seen;
                while lost.get(self.next).is_some_and(|&p| p < at) {
                    self.next += 1;
                }
                let hit = lost.get(self.next) == Some(&at);
                self.next += hit as usize;
                hit
            }
            LossModel::Bernoulli { loss_prob } => chance(&mut self.rng, loss_prob),
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
                let p_move = if self.bad { p_bad_to_good } else { p_good_to_bad };
                if chance(&mut self.rng, p_move) {
                    self.bad = !self.bad;
                }
                chance(&mut self.rng, if self.bad { loss_bad } else { loss_good })
            }
        }
    }

    /// Packets seen and dropped so far.
    pub fn stats(&self) -> LossStats {
        self.stats
    }

    /// The model being run (with probabilities clamped into `[0, 1]`).
    pub fn model(&self) -> &LossModel {
        &self.model
    }

    /// Whether a Gilbert–Elliott process is in its bad state (always `false` for the
    /// other models).
    pub fn in_bad_state(&self) -> bool {
        self.bad
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng(seed: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(seed)
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Link {
        loss: LossModel,
    }

    /// `kind = "list"` loses exactly the packets at the listed positions and draws nothing.
    #[test]
    fn a_list_loses_exactly_its_positions() {
        let l: Link = toml::from_str("[loss]\nkind = \"list\"\nlost = [0, 3, 4, 9]\n").unwrap();
        assert_eq!(l.loss, LossModel::List { lost: vec![0, 3, 4, 9] });
        let mut p = LossProcess::new(l.loss, rng(1));
        let dropped: Vec<u64> = (0..12).filter(|_| p.should_drop()).collect();
        assert_eq!(dropped, [0, 3, 4, 9]);
        assert_eq!((p.stats().packets_seen, p.stats().packets_dropped), (12, 4));
        assert_eq!(p.rng, rng(1), "no draw from the random stream");
        // Built in code out of order, positions already passed are skipped, never a panic.
        let mut p = LossProcess::new(LossModel::List { lost: vec![5, 2, 7] }, rng(1));
        let dropped: Vec<u64> = (0..9).filter(|_| p.should_drop()).collect();
        assert_eq!(dropped, [5, 7]);
    }

    /// A list that does not increase, a list without `lost`, or `lost` on another kind: one
    /// error naming the field.
    #[test]
    fn a_bad_list_is_an_error_naming_the_field() {
        let err = |t: &str| toml::from_str::<Link>(t).unwrap_err().to_string();
        let e = err("[loss]\nkind = \"list\"\nlost = [3, 9, 9]\n");
        assert!(
            e.contains("`lost` must list packet positions in increasing order, each once; lost[2] = 9 follows 9"),
            "{e}"
        );
        let e = err("[loss]\nkind = \"list\"\n");
        assert!(e.contains("lost: missing; kind = \"list\" needs it"), "{e}");
        let e = err("[loss]\nkind = \"bernoulli\"\nloss_prob = 0.1\nlost = [1]\n");
        assert!(e.contains("lost: only applies to kind = \"list\""), "{e}");
        let e = err("[loss]\nkind = \"list\"\nlost = [-1]\n");
        assert!(e.contains("lost = [-1]") && e.contains("expected u64"), "{e}");
    }

    #[test]
    fn deserializes_each_kind_from_toml() {
        let none: Link = toml::from_str("[loss]\nkind = \"none\"\n").unwrap();
        assert_eq!(none.loss, LossModel::None);

        let b: Link = toml::from_str("[loss]\nkind = \"bernoulli\"\nloss_prob = 0.02\n").unwrap();
        assert_eq!(b.loss, LossModel::Bernoulli { loss_prob: 0.02 });

        // Integers are accepted where a probability is expected.
        let b: Link = toml::from_str("[loss]\nkind = \"bernoulli\"\nloss_prob = 1\n").unwrap();
        assert_eq!(b.loss, LossModel::Bernoulli { loss_prob: 1.0 });

        let ge: Link = toml::from_str(
            "[loss]\nkind = \"gilbert_elliott\"\np_good_to_bad = 0.01\np_bad_to_good = 0.25\n\
             loss_good = 0.0\nloss_bad = 1.0\n",
        )
        .unwrap();
        assert_eq!(
            ge.loss,
            LossModel::GilbertElliott { p_good_to_bad: 0.01, p_bad_to_good: 0.25, loss_good: 0.0, loss_bad: 1.0 }
        );
    }

    #[test]
    fn out_of_range_probabilities_name_the_field() {
        // The error points at the value (the scenario adds the field's path, see
        // scenario_fields::render_parse_error).
        let err = toml::from_str::<Link>("[loss]\nkind = \"bernoulli\"\nloss_prob = 1.5\n").unwrap_err().to_string();
        assert!(err.contains("line 3") && err.contains("a probability") && err.contains("got 1.5"), "{err}");

        let err = toml::from_str::<Link>(
            "[loss]\nkind = \"gilbert_elliott\"\np_good_to_bad = 0.01\np_bad_to_good = 0.25\n\
             loss_good = -0.1\nloss_bad = 1.0\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("line 5") && err.contains("got -0.1"), "{err}");

        let err = toml::from_str::<Link>("[loss]\nkind = \"bernoulli\"\nloss_prob = nan\n").unwrap_err().to_string();
        assert!(err.contains("line 3") && err.contains("got NaN"), "{err}");

        // A percentage is a probability too.
        let l = toml::from_str::<Link>("[loss]\nkind = \"bernoulli\"\nloss_prob = \"5%\"\n").unwrap();
        assert_eq!(l.loss, LossModel::Bernoulli { loss_prob: 0.05 });
        let err =
            toml::from_str::<Link>("[loss]\nkind = \"bernoulli\"\nloss_prob = \"five\"\n").unwrap_err().to_string();
        assert!(err.contains("or a percentage such as \"5%\", got \"five\""), "{err}");

        let err = serde_json::from_str::<LossModel>(
            r#"{"kind":"gilbert_elliott","p_good_to_bad":2,"p_bad_to_good":0.5,"loss_good":0,"loss_bad":1}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("a probability") && err.contains("got 2"), "{err}");
    }

    #[test]
    fn unknown_fields_and_kinds_are_rejected() {
        let err = toml::from_str::<Link>("[loss]\nkind = \"bernoulli\"\nloss_prob = 0.1\nloss_rate = 0.1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field"), "{err}");

        let err = toml::from_str::<Link>("[loss]\nkind = \"none\"\nloss_prob = 0.1\n").unwrap_err().to_string();
        assert!(err.contains("loss_prob: only applies to kind = \"bernoulli\""), "{err}");

        let err = toml::from_str::<Link>("[loss]\nkind = \"gilbert\"\n").unwrap_err().to_string();
        assert!(err.contains("unknown variant"), "{err}");

        assert!(toml::from_str::<Link>("[loss]\nloss_prob = 0.1\n").is_err());
        assert!(toml::from_str::<Link>("[loss]\nkind = \"bernoulli\"\n").is_err());
    }

    #[test]
    fn serializes_with_the_kind_tag_and_reads_back() {
        let model =
            LossModel::GilbertElliott { p_good_to_bad: 0.01, p_bad_to_good: 0.25, loss_good: 0.0, loss_bad: 1.0 };
        let json = serde_json::to_string(&model).unwrap();
        assert!(json.contains(r#""kind":"gilbert_elliott""#), "{json}");
        assert_eq!(serde_json::from_str::<LossModel>(&json).unwrap(), model);
    }

    #[test]
    fn validate_checks_models_built_in_code() {
        assert!(LossModel::None.validate().is_ok());
        assert!(LossModel::Bernoulli { loss_prob: 0.0 }.validate().is_ok());
        assert!(LossModel::Bernoulli { loss_prob: 1.0 }.validate().is_ok());
        assert_eq!(
            LossModel::Bernoulli { loss_prob: f64::INFINITY }.validate(),
            Err(LossModelError::NotAProbability { model: "bernoulli", field: "loss_prob", value: f64::INFINITY })
        );
        let bad =
            LossModel::GilbertElliott { p_good_to_bad: 0.1, p_bad_to_good: f64::NAN, loss_good: 0.0, loss_bad: 1.0 };
        assert!(matches!(bad.validate(), Err(LossModelError::NotAProbability { field: "p_bad_to_good", .. })));
    }

    #[test]
    fn invalid_models_in_code_are_clamped_not_panicking() {
        for (p, expect_all) in [(2.0, true), (-1.0, false), (f64::NAN, false)] {
            let mut process = LossProcess::new(LossModel::Bernoulli { loss_prob: p }, rng(1));
            let drops = (0..1000).filter(|_| process.should_drop()).count();
            assert_eq!(drops, if expect_all { 1000 } else { 0 }, "p = {p}");
        }
    }

    #[test]
    fn none_never_drops() {
        let mut process = LossProcess::new(LossModel::None, rng(1));
        assert!((0..10_000).all(|_| !process.should_drop()));
        assert_eq!(process.stats(), LossStats { packets_seen: 10_000, packets_dropped: 0 });
    }

    #[test]
    fn bernoulli_two_percent_over_200k_draws() {
        let mut process = LossProcess::new(LossModel::Bernoulli { loss_prob: 0.02 }, rng(7));
        for _ in 0..200_000 {
            process.should_drop();
        }
        let stats = process.stats();
        assert_eq!(stats.packets_seen, 200_000);
        // Standard deviation is sqrt(0.02 · 0.98 / 200k) ≈ 0.031 pp: ±0.15 pp is ~5σ.
        let rate_pp = stats.loss_rate() * 100.0;
        assert!((rate_pp - 2.0).abs() <= 0.15, "loss rate {rate_pp} %");
    }

    #[test]
    fn bernoulli_edges_are_exact() {
        let mut never = LossProcess::new(LossModel::Bernoulli { loss_prob: 0.0 }, rng(3));
        let mut always = LossProcess::new(LossModel::Bernoulli { loss_prob: 1.0 }, rng(3));
        assert!((0..100_000).all(|_| !never.should_drop()));
        assert!((0..100_000).all(|_| always.should_drop()));
    }

    #[test]
    fn gilbert_elliott_long_run_loss_matches_the_stationary_formula() {
        let (p_gb, p_bg, loss_good, loss_bad) = (0.02, 0.2, 0.01, 0.6);
        let model = LossModel::GilbertElliott { p_good_to_bad: p_gb, p_bad_to_good: p_bg, loss_good, loss_bad };
        let pi_bad: f64 = p_gb / (p_gb + p_bg);
        let expected = pi_bad * loss_bad + (1.0 - pi_bad) * loss_good;
        assert!((model.mean_loss_prob() - expected).abs() < 1e-12);

        let mut process = LossProcess::new(model, rng(11));
        let n = 1_000_000;
        let mut bad_packets = 0u64;
        for _ in 0..n {
            process.should_drop();
            bad_packets += u64::from(process.in_bad_state());
        }
        let rate = process.stats().loss_rate();
        // expected ≈ 0.0636; bursts make the variance larger than Bernoulli's, so allow ±0.005.
        assert!((rate - expected).abs() < 0.005, "loss {rate} vs {expected}");
        let bad_share = bad_packets as f64 / n as f64;
        assert!((bad_share - pi_bad).abs() < 0.005, "π_B {bad_share} vs {pi_bad}");
    }

    #[test]
    fn gilbert_elliott_mean_burst_length_is_one_over_p_bad_to_good() {
        let p_bg = 0.25;
        let model =
            LossModel::GilbertElliott { p_good_to_bad: 0.02, p_bad_to_good: p_bg, loss_good: 0.0, loss_bad: 1.0 };
        let mut process = LossProcess::new(model, rng(5));
        let (mut bursts, mut burst_packets, mut in_burst) = (0u64, 0u64, false);
        for _ in 0..1_000_000 {
            let dropped = process.should_drop();
            // With loss_bad = 1 and loss_good = 0, drops are exactly the bad-state packets.
            assert_eq!(dropped, process.in_bad_state());
            if dropped {
                burst_packets += 1;
                if !in_burst {
                    bursts += 1;
                }
            }
            in_burst = dropped;
        }
        assert!(bursts > 10_000, "only {bursts} bursts");
        let mean = burst_packets as f64 / bursts as f64;
        let expected = 1.0 / p_bg;
        assert!((mean - expected).abs() / expected < 0.03, "mean burst {mean} vs {expected}");
    }

    #[test]
    fn fixed_seed_is_deterministic() {
        let model =
            LossModel::GilbertElliott { p_good_to_bad: 0.05, p_bad_to_good: 0.3, loss_good: 0.01, loss_bad: 0.5 };
        let run = |seed| {
            let mut process = LossProcess::new(model.clone(), rng(seed));
            (0..10_000).map(|_| process.should_drop()).collect::<Vec<_>>()
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));

        let bernoulli = |seed| {
            let mut process = LossProcess::new(LossModel::Bernoulli { loss_prob: 0.1 }, rng(seed));
            (0..10_000).map(|_| process.should_drop()).collect::<Vec<_>>()
        };
        assert_eq!(bernoulli(9), bernoulli(9));
    }

    #[test]
    fn gilbert_elliott_draws_exactly_two_numbers_per_packet() {
        // Even with degenerate probabilities the stream advances by two f64 draws per packet.
        let model = LossModel::GilbertElliott { p_good_to_bad: 0.0, p_bad_to_good: 0.0, loss_good: 0.0, loss_bad: 1.0 };
        let mut process = LossProcess::new(model, rng(2));
        for _ in 0..10 {
            assert!(!process.should_drop());
        }
        let mut reference = rng(2);
        for _ in 0..20 {
            let _: f64 = reference.random();
        }
        let mut after = process.rng.clone();
        assert_eq!(after.random::<u64>(), reference.random::<u64>());
    }
}
