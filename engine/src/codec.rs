//! Version-tagged binary encoding of stored structures.
//!
//! Every value the engine writes to RocksDB is one tag byte (the structure's format version)
//! followed by its `bincode` encoding. A value written by a future or past layout is reported as
//! [`Error::FormatVersion`] instead of being decoded into garbage.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{Error, Result};

/// Format version of every structure the engine stores. Bump on any layout change.
pub(crate) const VALUE_FORMAT: u8 = 1;

fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Encodes `value` behind the format tag.
pub(crate) fn encode<T: Serialize>(what: &'static str, value: &T) -> Result<Vec<u8>> {
    let mut out = vec![VALUE_FORMAT];
    bincode::serde::encode_into_std_write(value, &mut out, config()).map_err(|e| {
        Error::Encode {
            what,
            detail: e.to_string(),
        }
    })?;
    Ok(out)
}

/// Decodes a value written by [`encode`], checking its tag and that no bytes are left over.
pub(crate) fn decode<T: DeserializeOwned>(what: &'static str, bytes: &[u8]) -> Result<T> {
    let body = tagged_body(what, bytes)?;
    let (value, used) =
        bincode::serde::decode_from_slice(body, config()).map_err(|e| Error::Corrupt {
            what,
            detail: e.to_string(),
        })?;
    if used != body.len() {
        return Err(Error::Corrupt {
            what,
            detail: format!("{} trailing bytes", body.len() - used),
        });
    }
    Ok(value)
}

/// The encoding behind the format tag, after checking the tag.
fn tagged_body<'a>(what: &'static str, bytes: &'a [u8]) -> Result<&'a [u8]> {
    let (&tag, body) = bytes.split_first().ok_or_else(|| Error::Corrupt {
        what,
        detail: "empty value".into(),
    })?;
    if tag != VALUE_FORMAT {
        return Err(Error::FormatVersion {
            what,
            found: tag,
            expected: VALUE_FORMAT,
        });
    }
    Ok(body)
}

/// Decodes a value written by [`encode`] whose strings borrow from `bytes` (a view of a stored
/// structure that copies nothing).
pub(crate) fn decode_borrowed<'a, T: serde::Deserialize<'a>>(
    what: &'static str,
    bytes: &'a [u8],
) -> Result<T> {
    let body = tagged_body(what, bytes)?;
    let (value, _) =
        bincode::serde::borrow_decode_from_slice(body, config()).map_err(|e| Error::Corrupt {
            what,
            detail: e.to_string(),
        })?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Sample {
        a: u64,
        b: String,
    }

    #[test]
    fn round_trips() {
        let s = Sample {
            a: 7,
            b: "hi".into(),
        };
        let bytes = encode("sample", &s).unwrap();
        assert_eq!(decode::<Sample>("sample", &bytes).unwrap(), s);
    }

    #[test]
    fn rejects_other_version_and_garbage() {
        let mut bytes = encode(
            "sample",
            &Sample {
                a: 1,
                b: "x".into(),
            },
        )
        .unwrap();
        bytes[0] = 9;
        assert!(matches!(
            decode::<Sample>("sample", &bytes),
            Err(Error::FormatVersion { found: 9, .. })
        ));
        assert!(matches!(
            decode::<Sample>("sample", &[]),
            Err(Error::Corrupt { .. })
        ));
        assert!(matches!(
            decode::<Sample>("sample", &[VALUE_FORMAT, 0xff, 0xff, 0xff]),
            Err(Error::Corrupt { .. })
        ));
        let mut long = encode(
            "sample",
            &Sample {
                a: 1,
                b: "x".into(),
            },
        )
        .unwrap();
        long.push(0);
        assert!(matches!(
            decode::<Sample>("sample", &long),
            Err(Error::Corrupt { .. })
        ));
    }
}
