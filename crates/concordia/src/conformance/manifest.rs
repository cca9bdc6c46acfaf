//! A suite's `manifest.json`: which vector files it pins, and how many.

use serde_json::Value;

/// The vector files of a suite, as paths relative to the suite's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// `files.positive`.
    pub positive: Vec<String>,
    /// `files.mutation`.
    pub mutation: Vec<String>,
    /// `files.canary`.
    pub canary: Vec<String>,
}

/// A manifest that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("manifest.json: {0}")]
pub struct ManifestError(pub String);

impl Manifest {
    /// Reads a manifest, checking that each list holds the count it pins
    /// (`counts.positive`, …) and that no path repeats.
    pub fn parse(value: &Value) -> Result<Manifest, ManifestError> {
        let files = value
            .get("files")
            .and_then(Value::as_object)
            .ok_or_else(|| ManifestError("no files object".into()))?;
        let list = |name: &str| -> Result<Vec<String>, ManifestError> {
            let items = match files.get(name) {
                None => return Ok(Vec::new()),
                Some(Value::Array(items)) => items,
                Some(_) => return Err(ManifestError(format!("files.{name} is not an array"))),
            };
            let paths: Vec<String> = items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| ManifestError(format!("files.{name} holds a non-string")))
                })
                .collect::<Result<_, _>>()?;
            if let Some(count) = value.pointer(&format!("/counts/{name}")) {
                if count.as_u64() != Some(paths.len() as u64) {
                    return Err(ManifestError(format!(
                        "counts.{name} is {count} but files.{name} lists {}",
                        paths.len()
                    )));
                }
            }
            Ok(paths)
        };
        let m = Manifest {
            positive: list("positive")?,
            mutation: list("mutation")?,
            canary: list("canary")?,
        };
        let mut all: Vec<&String> = m.vectors().collect();
        all.sort();
        if all.windows(2).any(|w| w[0] == w[1]) {
            return Err(ManifestError("a vector file is listed twice".into()));
        }
        if all.is_empty() {
            return Err(ManifestError("it lists no vectors".into()));
        }
        Ok(m)
    }

    /// Every vector file: positive, then mutation, then canary.
    pub fn vectors(&self) -> impl Iterator<Item = &String> {
        self.positive
            .iter()
            .chain(&self.mutation)
            .chain(&self.canary)
    }

    /// How many vectors.
    pub fn len(&self) -> usize {
        self.positive.len() + self.mutation.len() + self.canary.len()
    }

    /// True when it lists none (never, once parsed).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
