//! stub (replaced by the full module)
#![allow(missing_docs)]
use serde::Deserialize;
#[derive(Clone, Debug, PartialEq, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossModel { #[default] None, Bernoulli { loss_prob: f64 }, GilbertElliott { p_good_to_bad: f64, p_bad_to_good: f64, loss_good: f64, loss_bad: f64 } }
#[derive(Debug)]
pub struct LossProcess { model: LossModel, rng: rand_chacha::ChaCha8Rng }
impl LossProcess {
    pub fn new(model: LossModel, rng: rand_chacha::ChaCha8Rng) -> Self { Self { model, rng } }
    pub fn should_drop(&mut self) -> bool { use rand::Rng; match self.model { LossModel::Bernoulli { loss_prob } => self.rng.gen::<f64>() < loss_prob, _ => false } }
}
