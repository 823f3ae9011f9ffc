//! The model's tokenizer, built from the GGUF's own vocabulary, merges and special tokens, so
//! training encodes text exactly as the llama.cpp server that serves the adapter does
//! (checked against its `/tokenize` in the server tests).

use std::path::Path;

use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{AddedToken, Tokenizer};

use crate::chat::ChatTemplate;
use crate::error::{Result, SftError};
use crate::gguf::{as_usize, GgufFile};

/// GGUF token types that are special (control and user-defined tokens).
const SPECIAL_TOKEN_TYPES: [usize; 2] = [3, 4];

/// A byte-level BPE tokenizer and the chat template of a GGUF model.
pub struct ChatTokenizer {
    inner: Tokenizer,
    eos: u32,
    template: ChatTemplate,
}

impl ChatTokenizer {
    /// The tokenizer `file` describes (`tokenizer.ggml.*`); only GPT-2-style byte-level BPE
    /// (`model = gpt2`) with the `smollm` or `gpt2` pre-tokenizer is built.
    pub fn from_gguf(file: &GgufFile) -> Result<ChatTokenizer> {
        let bad = |reason: String| SftError::gguf(file.path(), reason);
        let model = file.string("tokenizer.ggml.model")?;
        if model != "gpt2" {
            return Err(bad(format!(
                "tokenizer model {model:?}: only byte-level BPE (gpt2) is built"
            )));
        }
        let digits_apart = match file.string("tokenizer.ggml.pre").unwrap_or("gpt2") {
            "smollm" => true,
            "gpt2" | "default" => false,
            other => {
                return Err(bad(format!(
                    "pre-tokenizer {other:?}: only smollm and gpt2 are built"
                )))
            }
        };
        let tokens: Vec<&str> = file
            .array("tokenizer.ggml.tokens")?
            .iter()
            .map(|value| value.to_string().map(String::as_str))
            .collect::<Result<_, _>>()
            .map_err(|e| bad(format!("tokenizer.ggml.tokens: {e}")))?;
        let vocab: Vocab = tokens
            .iter()
            .enumerate()
            .map(|(id, token)| (token.to_string(), id as u32))
            .collect();
        let merges = file
            .array("tokenizer.ggml.merges")?
            .iter()
            .map(|value| {
                let merge = value.to_string().map_err(|e| e.to_string())?;
                merge
                    .split_once(' ')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .ok_or_else(|| format!("merge {merge:?} is not two tokens"))
            })
            .collect::<Result<Vec<_>, String>>()
            .map_err(|e| bad(format!("tokenizer.ggml.merges: {e}")))?;
        let bpe = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .build()
            .map_err(|e| bad(format!("BPE: {e}")))?;
        let mut inner = Tokenizer::new(bpe);
        let byte_level = PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, true));
        let pre = if digits_apart {
            Sequence::new(vec![
                PreTokenizerWrapper::Digits(Digits::new(true)),
                byte_level,
            ])
        } else {
            Sequence::new(vec![byte_level])
        };
        inner.with_pre_tokenizer(Some(pre));
        inner.with_decoder(Some(ByteLevelDecoder::default()));
        let types = file.array("tokenizer.ggml.token_type")?;
        let special: Vec<AddedToken> = types
            .iter()
            .zip(&tokens)
            .filter(|(kind, _)| as_usize(kind).is_some_and(|k| SPECIAL_TOKEN_TYPES.contains(&k)))
            .map(|(_, token)| AddedToken::from(token.to_string(), true))
            .collect();
        inner
            .add_special_tokens(special)
            .map_err(|e| bad(format!("special tokens: {e}")))?;
        let eos = file.usize("tokenizer.ggml.eos_token_id")?;
        if eos >= tokens.len() {
            return Err(bad(format!("eos token {eos} is outside the vocabulary")));
        }
        let template = ChatTemplate::from_jinja(file.string("tokenizer.chat_template")?)?;
        Ok(ChatTokenizer {
            inner,
            eos: eos as u32,
            template,
        })
    }

    /// The tokenizer of a Hugging Face model directory: `tokenizer.json`, and the chat template
    /// and end token of `tokenizer_config.json`.
    pub fn from_hf_dir(dir: &Path) -> Result<ChatTokenizer> {
        let path = dir.join("tokenizer.json");
        let inner = Tokenizer::from_file(&path)
            .map_err(|e| SftError::gguf(&path, format!("not a tokenizer ({e})")))?;
        let path = dir.join("tokenizer_config.json");
        let text = std::fs::read_to_string(&path).map_err(|e| SftError::io(&path, e))?;
        let config: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| SftError::gguf(&path, format!("not JSON ({e})")))?;
        let field = |key: &str| {
            config[key]
                .as_str()
                .ok_or_else(|| SftError::gguf(&path, format!("no {key}")))
        };
        let eos_token = field("eos_token")?;
        let eos = inner
            .token_to_id(eos_token)
            .ok_or_else(|| SftError::gguf(&path, format!("eos_token {eos_token:?} is no token")))?;
        let template = ChatTemplate::from_jinja(field("chat_template")?)?;
        Ok(ChatTokenizer {
            inner,
            eos,
            template,
        })
    }

    /// The tokenizer of the base model at `path`: a GGUF file's, or a directory's.
    pub fn for_model(path: &Path) -> Result<ChatTokenizer> {
        if path.is_dir() {
            ChatTokenizer::from_hf_dir(path)
        } else {
            ChatTokenizer::from_gguf(&GgufFile::open(path)?)
        }
    }

    /// The tokenizer itself (to save it as `tokenizer.json`, say).
    pub fn inner(&self) -> &Tokenizer {
        &self.inner
    }

    /// The ids of `text`, special tokens written in it included, with nothing added (upstream's
    /// `encode(text, add_special_tokens=False)`).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let encoding = self
            .inner
            .encode(text, false)
            .map_err(|e| SftError::Tokenizer(e.to_string()))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// The text of `ids`.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        self.inner
            .decode(ids, false)
            .map_err(|e| SftError::Tokenizer(e.to_string()))
    }

    /// The end-of-sequence token (`<|im_end|>` for SmolLM2).
    pub fn eos(&self) -> u32 {
        self.eos
    }

    /// The model's chat template.
    pub fn template(&self) -> &ChatTemplate {
        &self.template
    }
}
