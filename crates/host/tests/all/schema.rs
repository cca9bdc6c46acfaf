//! The two stores hold one schema: a fresh SQLite database (with its nonce
//! file) and a fresh PostgreSQL database, each migrated by opening it, have
//! the same tables, columns (names, NOT NULL, and types mapped: SQLite keeps
//! booleans and every integer as INTEGER), primary keys, foreign keys,
//! unique constraints and indexes. Read from the databases themselves, so
//! a migration written for one store alone fails here.

use std::collections::BTreeMap;

use countersign_host::config::Durability;
use countersign_host::store::{self, Target};

use crate::common::{fresh_postgres, pg_client};

/// Tables only PostgreSQL has, and why.
const PG_ONLY: &[&str] = &[
    // Its schema version (SQLite keeps it in PRAGMA user_version).
    "countersign_schema",
    // Rate-limit windows shared by every process (SQLite's one process
    // counts them in memory).
    "rate_windows",
];

/// One table as both databases describe it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Table {
    /// name -> (SQLite's type affinity, NOT NULL).
    columns: BTreeMap<String, (String, bool)>,
    primary_key: Vec<String>,
    /// (columns, referenced table, referenced columns), sorted.
    foreign_keys: Vec<(Vec<String>, String, Vec<String>)>,
    /// Column sets that are unique (constraints), sorted.
    unique: Vec<Vec<String>>,
    /// Indexes created by name: name -> (columns, unique).
    indexes: BTreeMap<String, (Vec<String>, bool)>,
}

type Schema = BTreeMap<String, Table>;

/// A SQLite column's declared type as its affinity (SQLite's own rules:
/// BIGINT is INTEGER, VARCHAR is TEXT).
fn affinity(declared: &str) -> String {
    let t = declared.to_uppercase();
    if t.contains("INT") {
        "INTEGER"
    } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") {
        "TEXT"
    } else if t.contains("BLOB") || t.is_empty() {
        "BLOB"
    } else if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") {
        "REAL"
    } else {
        "NUMERIC"
    }
    .to_owned()
}

/// PostgreSQL's type as the SQLite affinity of the same column.
fn as_sqlite_type(pg: &str) -> String {
    match pg {
        "text" => "TEXT",
        "bigint" | "integer" | "boolean" => "INTEGER",
        "bytea" => "BLOB",
        other => other,
    }
    .to_owned()
}

fn sqlite_schema(path: &std::path::Path, into: &mut Schema) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for name in tables {
        let mut t = Table::default();
        let mut pk: Vec<(i64, String)> = Vec::new();
        let mut stmt = conn.prepare(&format!("PRAGMA table_info({name})")).unwrap();
        let mut rows = stmt.query([]).unwrap();
        while let Some(r) = rows.next().unwrap() {
            let column: String = r.get(1).unwrap();
            let declared: String = r.get(2).unwrap();
            let not_null: bool = r.get(3).unwrap();
            let key: i64 = r.get(5).unwrap();
            if key > 0 {
                pk.push((key, column.clone()));
            }
            // A key column is NOT NULL in PostgreSQL whether or not declared.
            t.columns
                .insert(column, (affinity(&declared), not_null || key > 0));
        }
        pk.sort();
        t.primary_key = pk.into_iter().map(|(_, c)| c).collect();
        let mut fks: BTreeMap<i64, (Vec<String>, String, Vec<String>)> = BTreeMap::new();
        let mut stmt = conn
            .prepare(&format!("PRAGMA foreign_key_list({name})"))
            .unwrap();
        let mut rows = stmt.query([]).unwrap();
        while let Some(r) = rows.next().unwrap() {
            let id: i64 = r.get(0).unwrap();
            let entry = fks.entry(id).or_default();
            entry.1 = r.get(2).unwrap();
            entry.0.push(r.get(3).unwrap());
            entry.2.push(r.get(4).unwrap());
        }
        t.foreign_keys = fks.into_values().collect();
        t.foreign_keys.sort();
        let indexes: Vec<(String, bool, String)> = conn
            .prepare(&format!("PRAGMA index_list({name})"))
            .unwrap()
            .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (index, unique, origin) in indexes {
            let columns: Vec<String> = conn
                .prepare(&format!("PRAGMA index_info({index})"))
                .unwrap()
                .query_map([], |r| r.get(2))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            match origin.as_str() {
                "u" => t.unique.push(columns),
                "c" => {
                    t.indexes.insert(index, (columns, unique));
                }
                _ => {} // the primary key's own index
            }
        }
        t.unique.sort();
        assert!(into.insert(name.clone(), t).is_none(), "{name} twice");
    }
}

async fn pg_schema(url: &str) -> Schema {
    let client = pg_client(url).await;
    let mut schema = Schema::new();
    for r in client
        .query(
            "SELECT table_name::TEXT, column_name::TEXT, data_type::TEXT, is_nullable = 'NO'
             FROM information_schema.columns WHERE table_schema = 'public'",
            &[],
        )
        .await
        .unwrap()
    {
        let table: String = r.get(0);
        let data_type: String = r.get(2);
        schema
            .entry(table)
            .or_default()
            .columns
            .insert(r.get(1), (as_sqlite_type(&data_type), r.get(3)));
    }
    // Constraints: primary keys, unique sets and foreign keys, each with its
    // columns in key order.
    for r in client
        .query(
            "SELECT c.conrelid::regclass::TEXT, c.contype::TEXT,
                    ARRAY(SELECT a.attname::TEXT FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i),
                    COALESCE(c.confrelid::regclass::TEXT, ''),
                    ARRAY(SELECT a.attname::TEXT FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                          JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i)
             FROM pg_constraint c JOIN pg_namespace s ON s.oid = c.connamespace
             WHERE s.nspname = 'public' AND c.contype IN ('p', 'u', 'f')",
            &[],
        )
        .await
        .unwrap()
    {
        let table: String = r.get(0);
        let kind: String = r.get(1);
        let columns: Vec<String> = r.get(2);
        let t = schema.entry(table).or_default();
        match kind.as_str() {
            "p" => t.primary_key = columns,
            "u" => t.unique.push(columns),
            _ => t.foreign_keys.push((columns, r.get(3), r.get(4))),
        }
    }
    // Indexes created by name (not those backing a constraint).
    for r in client
        .query(
            "SELECT t.relname::TEXT, i.relname::TEXT, x.indisunique,
                    ARRAY(SELECT a.attname::TEXT FROM unnest(x.indkey) WITH ORDINALITY k(n, o)
                          JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n ORDER BY k.o)
             FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
             JOIN pg_namespace s ON s.oid = t.relnamespace
             WHERE s.nspname = 'public'
               AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)",
            &[],
        )
        .await
        .unwrap()
    {
        let table: String = r.get(0);
        schema
            .entry(table)
            .or_default()
            .indexes
            .insert(r.get(1), (r.get(3), r.get(2)));
    }
    for t in schema.values_mut() {
        t.unique.sort();
        t.foreign_keys.sort();
    }
    schema
}

#[tokio::test]
async fn sqlite_and_postgresql_hold_the_same_tables_columns_keys_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("host.db");
    let lite = store::open(&Target::Sqlite(db.clone()), Durability::default())
        .await
        .unwrap();
    drop(lite);
    let mut sqlite = Schema::new();
    sqlite_schema(&db, &mut sqlite);
    // Nonces live in their own file beside the database (so spending one
    // never waits for an append): the same table, another file.
    sqlite_schema(&store::sqlite::nonce_path(&db), &mut sqlite);

    let url = fresh_postgres().await;
    let pg = store::open(&Target::Postgres(url.clone()), Durability::default())
        .await
        .unwrap();
    drop(pg);
    let mut postgres = pg_schema(&url).await;
    for table in PG_ONLY {
        assert!(
            postgres.remove(*table).is_some(),
            "{table} is listed as PostgreSQL's own but is not there"
        );
    }

    assert_eq!(
        sqlite.keys().collect::<Vec<_>>(),
        postgres.keys().collect::<Vec<_>>(),
        "the same tables"
    );
    for (name, table) in &sqlite {
        assert_eq!(
            Some(table),
            postgres.get(name),
            "table {name}: SQLite (left) and PostgreSQL (right) differ"
        );
    }
}
