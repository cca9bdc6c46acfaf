//! JSON Schema (draft 2020-12) validators for Concordia's artifacts.
//!
//! `format: date-time` is asserted with [`crate::datetime`]'s rule (an
//! explicit offset is required); every other format is an annotation, as
//! RUNNER_CONTRACT says. References resolve only to schemas handed in: no
//! file or network is ever read.

use std::sync::OnceLock;

use serde_json::Value;

/// The draft 2020-12 formats other than `date-time`: annotations only.
const ANNOTATION_FORMATS: &[&str] = &[
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// A compiled schema.
pub struct Schema {
    validator: jsonschema::Validator,
}

/// The schema itself could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a usable JSON Schema: {0}")]
pub struct SchemaError(pub String);

impl Schema {
    /// Compiles `schema`; `resources` are other schemas its `$ref`s may name,
    /// by their `$id`.
    pub fn compile(schema: &Value, resources: &[&Value]) -> Result<Schema, SchemaError> {
        let mut options = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .with_format("date-time", crate::datetime::is_valid)
            .should_validate_formats(true);
        for name in ANNOTATION_FORMATS {
            options = options.with_format(*name, |_: &str| true);
        }
        let registry;
        if !resources.is_empty() {
            let mut builder = jsonschema::Registry::new();
            for resource in resources {
                let id = resource
                    .get("$id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| SchemaError("a resource schema has no $id".into()))?;
                builder = builder
                    .add(id, (*resource).clone())
                    .map_err(|e| SchemaError(e.to_string()))?;
            }
            registry = builder.prepare().map_err(|e| SchemaError(e.to_string()))?;
            options = options.with_registry(&registry);
            let validator = options
                .build(schema)
                .map_err(|e| SchemaError(e.to_string()))?;
            return Ok(Schema { validator });
        }
        let validator = options
            .build(schema)
            .map_err(|e| SchemaError(e.to_string()))?;
        Ok(Schema { validator })
    }

    /// Every way `instance` fails the schema, as `"<json pointer>: <why>"`
    /// (empty when valid). The instance's own text is never echoed.
    pub fn errors(&self, instance: &Value) -> Vec<String> {
        self.validator
            .iter_errors(instance)
            .map(|e| {
                let path = e.instance_path().to_string();
                let path = if path.is_empty() {
                    "/".to_owned()
                } else {
                    path
                };
                format!("{path}: fails the schema's {:?} rule", e.kind().keyword())
            })
            .collect()
    }

    /// True when `instance` is valid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }
}

fn embedded(text: &'static str) -> Value {
    // The vendored schemas are valid JSON; a broken vendor tree is a build bug.
    serde_json::from_str(text).unwrap_or(Value::Null)
}

macro_rules! vendored_schema {
    ($(#[$doc:meta])* $name:ident, $file:literal $(, $res:ident)*) => {
        $(#[$doc])*
        /// `None` only if the vendored file could not be compiled (a build
        /// defect; callers then fail the schema check, naming why).
        pub fn $name() -> Option<&'static Schema> {
            static CELL: OnceLock<Option<Schema>> = OnceLock::new();
            CELL.get_or_init(|| {
                let schema = embedded(include_str!(concat!("../../../vendor/concordia/schemas/", $file)));
                let resources: Vec<Value> = vec![$(embedded(include_str!(concat!("../../../vendor/concordia/schemas/", $res)))),*];
                let refs: Vec<&Value> = resources.iter().collect();
                Schema::compile(&schema, &refs).ok()
            })
            .as_ref()
        }
    };
}

vendored_schema!(
    /// `approval_receipt.schema.json` (v0.5), vendored.
    approval_receipt,
    "approval_receipt.schema.json"
);
vendored_schema!(
    /// `revocation_record.schema.json` (v0.7), vendored.
    revocation_record,
    "revocation_record.schema.json"
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn date_time_is_asserted_with_an_offset() {
        let s = Schema::compile(&json!({"type": "string", "format": "date-time"}), &[]).unwrap();
        assert!(s.is_valid(&json!("2026-05-10T14:22:08Z")));
        assert!(!s.is_valid(&json!("2026-05-10T14:22:08")));
        assert!(!s.is_valid(&json!("soon")));
        let u = Schema::compile(&json!({"format": "uuid"}), &[]).unwrap();
        assert!(
            u.is_valid(&json!("not-a-uuid")),
            "other formats are annotations"
        );
    }

    #[test]
    fn vendored_schemas_compile() {
        let receipt = approval_receipt().expect("compiles");
        assert!(!receipt.is_valid(&json!({})));
        assert!(!revocation_record().expect("compiles").is_valid(&json!({})));
        assert_eq!(receipt.errors(&json!({})).len(), 1 + 7);
    }
}
