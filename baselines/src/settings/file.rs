//! Reading a settings file against a system's own settings type.
//!
//! The file is one flat table (the hybrid memory adds a `[hybrid]` table): the shared keys and
//! the system's own side by side. It is read in one pass, so every error keeps the file's line
//! and column: the shared keys are taken out as they come, the others go to the system's type,
//! whose `deny_unknown_fields` refuses a key no one declares.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{
    value::MapAccessDeserializer, DeserializeOwned, DeserializeSeed, Deserializer,
    IntoDeserializer, MapAccess, Visitor,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{check_retrieve_k, Overrides, SystemSettings};
use crate::error::MemoryError;

/// A system's own settings: the keys of its settings file beyond the shared ones, with
/// upstream's effective values as defaults. Implement it on a struct deriving `Deserialize`
/// with `#[serde(default, deny_unknown_fields)]`, and name it in the system's registry entry
/// ([`crate::SystemSpec::with_own_settings`]).
pub trait OwnSettings:
    Serialize + DeserializeOwned + Default + Clone + fmt::Debug + PartialEq + Send + Sync + 'static
{
    /// Refuses values the system cannot use, naming the key (the file is named around it).
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// The own settings of a system that has none: its file holds only the shared keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoOwnSettings {}

impl OwnSettings for NoOwnSettings {}

/// Reads settings text (`origin` names the file in errors); [`read_settings`] for a system's
/// own settings type.
pub type SettingsReader = fn(origin: &str, text: &str) -> Result<SystemSettings, MemoryError>;

/// Settings from TOML `text` for a system whose own settings are `T`; errors name `origin` and
/// the line and key at fault.
pub fn read_settings<T: OwnSettings>(
    origin: &str,
    text: &str,
) -> Result<SystemSettings, MemoryError> {
    let config = |detail: String| MemoryError::Config(format!("{origin}: {detail}"));
    let file: SettingsFile<T> = mb_core::parse_toml(text).map_err(|e| config(e.to_string()))?;
    let defaults = SystemSettings::default();
    let retrieve_k = file.shared.retrieve_k.unwrap_or(defaults.retrieve_k);
    check_retrieve_k(retrieve_k).map_err(|reason| config(format!("retrieve_k = {reason}")))?;
    file.own.check().map_err(config)?;
    Ok(SystemSettings {
        retrieve_k,
        cjk_analyzer: file.shared.cjk_analyzer.unwrap_or(defaults.cjk_analyzer),
        embedder: file.shared.embedder.unwrap_or(defaults.embedder),
        own: to_map(&file.own)?,
        overrides: Overrides::default(),
    })
}

/// `own` as the JSON object [`SystemSettings`] keeps.
pub(super) fn to_map<T: OwnSettings>(own: &T) -> Result<Map<String, Value>, MemoryError> {
    match serde_json::to_value(own) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(MemoryError::Config(format!(
            "own settings must be a table, not {other}"
        ))),
        Err(e) => Err(MemoryError::Config(format!("own settings: {e}"))),
    }
}

/// The keys every system's file may hold.
#[derive(Default)]
struct Shared {
    retrieve_k: Option<usize>,
    cjk_analyzer: Option<bool>,
    embedder: Option<String>,
}

/// A whole settings file: the shared keys and the system's own.
struct SettingsFile<T> {
    shared: Shared,
    own: T,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SettingsFile<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(FileVisitor(PhantomData))
    }
}

struct FileVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for FileVisitor<T> {
    type Value = SettingsFile<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table of settings")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let mut shared = Shared::default();
        let own = T::deserialize(MapAccessDeserializer::new(OwnKeys {
            map,
            shared: &mut shared,
        }))?;
        Ok(SettingsFile { shared, own })
    }
}

/// The file's entries minus the shared keys, which it stores in `shared` on the way.
struct OwnKeys<'a, A> {
    map: A,
    shared: &'a mut Shared,
}

/// A key read by [`KeySeed`]: shared (and the seed, unused, back) or one of the system's own.
enum Key<K, V> {
    Shared(SharedKey, K),
    Own(V),
}

#[derive(Clone, Copy)]
enum SharedKey {
    RetrieveK,
    CjkAnalyzer,
    Embedder,
}

/// Reads a key: a shared one is kept apart, any other goes to the system's type (inside the
/// file's own key reading, so the type's errors carry the key's place).
struct KeySeed<K>(K);

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<K> {
    type Value = Key<K, K::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let key = String::deserialize(deserializer)?;
        let shared = match key.as_str() {
            "retrieve_k" => SharedKey::RetrieveK,
            "cjk_analyzer" => SharedKey::CjkAnalyzer,
            "embedder" => SharedKey::Embedder,
            _ => return self.0.deserialize(key.into_deserializer()).map(Key::Own),
        };
        Ok(Key::Shared(shared, self.0))
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for OwnKeys<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let mut seed = seed;
        loop {
            match self.map.next_key_seed(KeySeed(seed))? {
                None => return Ok(None),
                Some(Key::Own(key)) => return Ok(Some(key)),
                Some(Key::Shared(key, unused)) => {
                    match key {
                        SharedKey::RetrieveK => {
                            self.shared.retrieve_k = Some(self.map.next_value()?)
                        }
                        SharedKey::CjkAnalyzer => {
                            self.shared.cjk_analyzer = Some(self.map.next_value()?)
                        }
                        SharedKey::Embedder => self.shared.embedder = Some(self.map.next_value()?),
                    }
                    seed = unused;
                }
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}
