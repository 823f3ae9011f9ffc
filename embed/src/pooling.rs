//! Turning a transformer's token states into one unit vector per text.
//!
//! Sentence-transformer models end in a pooling step that the ONNX export usually leaves out:
//! the graph returns one state per token and the caller averages them. Padding tokens must not
//! count, so pooling always takes the attention mask.

use serde::Deserialize;

/// How token states become a sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pooling {
    /// Mean over the real (unmasked) tokens: sentence-transformers' `pooling_mode_mean_tokens`.
    Mean,
    /// The first token's state (`[CLS]`).
    Cls,
}

impl Pooling {
    /// Reads sentence-transformers' `1_Pooling/config.json` (`pooling_mode_*` flags).
    pub fn from_sentence_transformers_config(json: &str) -> Result<Pooling, String> {
        #[derive(Deserialize)]
        struct Config {
            #[serde(default)]
            pooling_mode_mean_tokens: bool,
            #[serde(default)]
            pooling_mode_cls_token: bool,
        }
        let config: Config = serde_json::from_str(json).map_err(|e| e.to_string())?;
        match (
            config.pooling_mode_mean_tokens,
            config.pooling_mode_cls_token,
        ) {
            (true, false) => Ok(Pooling::Mean),
            (false, true) => Ok(Pooling::Cls),
            _ => Err(
                "exactly one of pooling_mode_mean_tokens and pooling_mode_cls_token must be true \
                      (max and sqrt-length pooling are not supported)"
                    .to_string(),
            ),
        }
    }

    /// Pools one text's token states (`tokens × dim`, row-major) under its attention mask.
    ///
    /// Only the first `mask.len()` rows are read; rows past the text's real length are padding.
    pub fn pool(self, states: &[f32], mask: &[i64], dim: usize) -> Vec<f32> {
        let mut out = vec![0.0f32; dim];
        match self {
            Pooling::Cls => {
                if let Some(first) = states.get(..dim) {
                    out.copy_from_slice(first);
                }
            }
            Pooling::Mean => {
                let mut real = 0usize;
                for (row, _) in states
                    .chunks_exact(dim)
                    .zip(mask)
                    .filter(|(_, &keep)| keep != 0)
                {
                    real += 1;
                    out.iter_mut().zip(row).for_each(|(o, x)| *o += x);
                }
                let denominator = real.max(1) as f32;
                out.iter_mut().for_each(|o| *o /= denominator);
            }
        }
        out
    }
}

/// Scales `vector` to unit length in place; a zero vector stays zero.
pub fn l2_normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pooling_ignores_padding() {
        // Two real tokens and one padding token with a huge state that must not leak in.
        let states = [1.0, 2.0, 3.0, 4.0, 1000.0, -1000.0];
        let pooled = Pooling::Mean.pool(&states, &[1, 1, 0], 2);
        assert_eq!(pooled, vec![2.0, 3.0]);
    }

    #[test]
    fn cls_pooling_takes_the_first_token() {
        let states = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(Pooling::Cls.pool(&states, &[1, 1], 2), vec![1.0, 2.0]);
    }

    #[test]
    fn normalize_gives_unit_length_and_keeps_zero() {
        let mut v = vec![3.0, 4.0];
        l2_normalize(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
        let mut zero = vec![0.0; 3];
        l2_normalize(&mut zero);
        assert_eq!(zero, vec![0.0; 3]);
    }

    #[test]
    fn reads_sentence_transformers_pooling_config() {
        let mean = r#"{"word_embedding_dimension": 384, "pooling_mode_cls_token": false,
                       "pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false}"#;
        assert_eq!(
            Pooling::from_sentence_transformers_config(mean),
            Ok(Pooling::Mean)
        );
        let none = r#"{"pooling_mode_max_tokens": true}"#;
        assert!(Pooling::from_sentence_transformers_config(none).is_err());
        assert!(Pooling::from_sentence_transformers_config("not json").is_err());
    }
}
