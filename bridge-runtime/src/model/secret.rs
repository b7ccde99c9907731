use super::REDACTED;
use std::fmt;

/// A value that must never leave the process in plaintext (GB-4.5-2).
///
/// `Serialize`, `Debug` and `Display` all produce `"••••••"`; the plaintext is reachable only
/// through [`Secret::expose`]. Store passwords and tokens in a `Secret` and even a `custom`
/// block or a returned `result` cannot leak them. It deserializes from the plain value, so an
/// action can take a `Secret<String>` parameter.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wraps a plaintext value.
    pub fn new(value: T) -> Self {
        Secret(value)
    }
    /// The plaintext, for the app's own use (never for rendering).
    pub fn expose(&self) -> &T {
        &self.0
    }
    /// Mutable access to the plaintext.
    pub fn expose_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> From<T> for Secret<T> {
    fn from(value: T) -> Self {
        Secret(value)
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T> fmt::Display for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T> serde::Serialize for Secret<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(REDACTED)
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Secret<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Secret)
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Secret<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut s = T::json_schema(generator);
        s.insert("writeOnly".into(), true.into());
        s
    }
    fn inline_schema() -> bool {
        true
    }
}
