//! Thrift1 writes: mutateRow(Ts), mutateRows(Ts), deleteAll(Ts), deleteAllRow(Ts),
//! atomicIncrement, increment, incrementRows, append, checkAndPut.
//!
//! Owns: turning Thrift1 `Mutation` lists into one atomic [`RowMutation`] per row
//! (deletes cover versions `<= ts`, puts are written at `ts`, LATEST meaning server
//! time), HBase's validation of each call, and counter/append/check-and-put
//! translation.
//! Must not: read rows (the backend's read-modify-write calls do that atomically).

use bytes::Bytes;
use tabula_storage::tablet::Condition;
use tabula_storage::{Durability, Mutation as EngineMutation, RowMutation, LATEST_TIMESTAMP};
use tabula_thrift::hbase::{BatchMutation, Mutation, TAppend, TCell, TIncrement};

use super::columns::ColumnSpec;
use super::convert::{durability, sort_like_hbase, tcell};
use super::errors::{Thrift1Error, Thrift1Result};
use super::{check_row_len, Thrift1Handler};
use crate::backend::{mutate_in_runs, BackendError};

/// What a put to a bare family (`fam`, no `:`) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BareFamilyPut {
    /// Skipped silently (mutateRow, mutateRowTs).
    Skip,
    /// The call fails with INTERNAL_ERROR before anything is written (mutateRows,
    /// mutateRowsTs).
    Reject,
}

/// Builds the row mutation for one row's Thrift1 mutations at `ts`; `None` when
/// nothing remains to write. The row goes without the commit log only when every
/// mutation says `writeToWAL = false`.
pub fn row_mutation(
    row: Vec<u8>,
    mutations: Vec<Mutation>,
    ts: i64,
    bare_family_put: BareFamilyPut,
) -> Thrift1Result<Option<(RowMutation, Durability)>> {
    let mut deletes = Vec::new();
    let mut puts = Vec::with_capacity(mutations.len());
    let mut all_skip_wal = !mutations.is_empty();
    for m in mutations {
        let spec = ColumnSpec::parse_owned(m.column.unwrap_or_default());
        if m.write_to_w_a_l.unwrap_or(true) {
            all_skip_wal = false;
        }
        if m.is_delete.unwrap_or(false) {
            deletes.push(match spec.qualifier {
                None => EngineMutation::DeleteFamily {
                    family: spec.family,
                    timestamp: ts,
                },
                Some(qualifier) => EngineMutation::DeleteColumn {
                    family: spec.family,
                    qualifier,
                    timestamp: ts,
                },
            });
            continue;
        }
        match (spec.qualifier, bare_family_put) {
            (Some(qualifier), _) => puts.push(EngineMutation::Put {
                family: spec.family,
                qualifier,
                timestamp: ts,
                value: Bytes::from(m.value.unwrap_or_default()),
            }),
            (None, BareFamilyPut::Skip) => {
                tracing::debug!(
                    family = %String::from_utf8_lossy(&spec.family),
                    "put to a bare column family skipped; a put needs family:qualifier"
                );
            }
            (None, BareFamilyPut::Reject) => {
                return Err(Thrift1Error::Internal(format!(
                    "Invalid famAndQf provided: the put to '{}' names no qualifier; \
                     a put needs family:qualifier",
                    String::from_utf8_lossy(&spec.family)
                )))
            }
        }
    }
    if deletes.is_empty() && puts.is_empty() {
        return Ok(None);
    }
    deletes.extend(puts);
    let rm = RowMutation {
        row: Bytes::from(row),
        mutations: deletes,
    };
    let d = if all_skip_wal {
        Durability::Skip
    } else {
        Durability::Sync
    };
    Ok(Some((rm, d)))
}

/// True for errors that would fail every row of a table the same way.
fn is_table_level(e: &BackendError) -> bool {
    matches!(
        e,
        BackendError::TableNotFound(_)
            | BackendError::TableDisabled(_)
            | BackendError::NamespaceNotFound(_)
    )
}

fn qualified(column: &[u8], what: &str) -> Thrift1Result<(Bytes, Bytes)> {
    ColumnSpec::parse(column).column().ok_or_else(|| {
        Thrift1Error::Internal(format!(
            "{what}: column '{}' names no qualifier; use family:qualifier",
            String::from_utf8_lossy(column)
        ))
    })
}

impl Thrift1Handler {
    /// mutateRow / mutateRowTs.
    pub fn mutate_row(
        &self,
        table: &[u8],
        row: Vec<u8>,
        mutations: Vec<Mutation>,
        ts: i64,
    ) -> Thrift1Result<()> {
        check_row_len(&row)?;
        if ts < 0 {
            return Err(Thrift1Error::IllegalArgument(format!(
                "java.lang.IllegalArgumentException: Timestamp cannot be negative. ts={ts}"
            )));
        }
        if let Some((rm, d)) = row_mutation(row, mutations, ts, BareFamilyPut::Skip)? {
            self.backend.mutate(table, &rm, d)?;
        }
        Ok(())
    }

    /// mutateRows / mutateRowsTs: every row is validated before any is written;
    /// a failing row does not stop the others, and the first failure is reported.
    pub fn mutate_rows(
        &self,
        table: &[u8],
        batches: Vec<BatchMutation>,
        ts: i64,
    ) -> Thrift1Result<()> {
        if ts < 0 {
            return Err(Thrift1Error::Internal(format!(
                "Timestamp cannot be negative. ts={ts}"
            )));
        }
        let mut planned = Vec::with_capacity(batches.len());
        for b in batches {
            let row = b.row.unwrap_or_default();
            check_row_len(&row)?;
            let mutations = b.mutations.unwrap_or_default();
            if let Some(p) = row_mutation(row, mutations, ts, BareFamilyPut::Reject)? {
                planned.push(p);
            }
        }
        let total = planned.len();
        let mut first: Option<BackendError> = None;
        let mut failed = 0;
        for r in mutate_in_runs(self.backend.as_ref(), table, planned)? {
            if let Err(e) = r {
                if is_table_level(&e) {
                    return Err(e.into());
                }
                failed += 1;
                if first.is_none() {
                    first = Some(e);
                }
            }
        }
        match first {
            None => Ok(()),
            Some(first) => Err(Thrift1Error::Rows {
                first,
                failed,
                total,
            }),
        }
    }

    /// deleteAll / deleteAllTs: `fam` deletes the family, `fam:q` the column, each
    /// for versions `<= ts`.
    pub fn delete_all(
        &self,
        table: &[u8],
        row: Vec<u8>,
        column: &[u8],
        ts: i64,
    ) -> Thrift1Result<()> {
        check_row_len(&row)?;
        if ts < 0 {
            return Err(Thrift1Error::Internal(format!(
                "Timestamp cannot be negative. ts={ts}"
            )));
        }
        let spec = ColumnSpec::parse(column);
        let m = match spec.qualifier {
            None => EngineMutation::DeleteFamily {
                family: spec.family,
                timestamp: ts,
            },
            Some(qualifier) => EngineMutation::DeleteColumn {
                family: spec.family,
                qualifier,
                timestamp: ts,
            },
        };
        let rm = RowMutation::new(row).with(m);
        Ok(self.backend.mutate(table, &rm, Durability::Sync)?)
    }

    /// deleteAllRow / deleteAllRowTs: every family, versions `<= ts`.
    pub fn delete_row(&self, table: &[u8], row: Vec<u8>, ts: i64) -> Thrift1Result<()> {
        check_row_len(&row)?;
        if ts < 0 {
            return Err(Thrift1Error::Internal(format!(
                "Timestamp cannot be negative. ts={ts}"
            )));
        }
        let rm = RowMutation::new(row).with(EngineMutation::DeleteRow { timestamp: ts });
        Ok(self.backend.mutate(table, &rm, Durability::Sync)?)
    }

    /// atomicIncrement: adds `amount` to an 8-byte big-endian counter (`fam` = the
    /// empty qualifier) and returns the new value. By 0 it returns the value and
    /// writes nothing.
    pub fn atomic_increment(
        &self,
        table: &[u8],
        row: Vec<u8>,
        column: &[u8],
        amount: i64,
    ) -> Thrift1Result<i64> {
        check_row_len(&row)?;
        let spec = ColumnSpec::parse(column);
        let qualifier = spec.qualifier.unwrap_or_default();
        let cells = self.backend.increment(
            table,
            &Bytes::from(row),
            &[(spec.family, qualifier, amount)],
            Durability::Sync,
        )?;
        let cell = cells
            .first()
            .ok_or_else(|| Thrift1Error::Io("the increment returned no cell".into()))?;
        let bytes: [u8; 8] = cell.value.as_ref().try_into().map_err(|_| {
            Thrift1Error::DoNotRetry(format!(
                "Field is not a long, it's {} bytes wide",
                cell.value.len()
            ))
        })?;
        Ok(i64::from_be_bytes(bytes))
    }

    /// increment: one TIncrement (column must be `fam:q`).
    pub fn increment(&self, inc: &TIncrement) -> Thrift1Result<()> {
        let table = inc.table.as_deref().unwrap_or_default();
        let row = inc.row.as_deref().unwrap_or_default();
        if table.is_empty() || row.is_empty() {
            return Err(Thrift1Error::Internal(
                "Must supply a table and a row key; can't increment".into(),
            ));
        }
        check_row_len(row)?;
        let (family, qualifier) =
            qualified(inc.column.as_deref().unwrap_or_default(), "increment")?;
        let row = Bytes::copy_from_slice(row);
        let amount = inc.ammount.unwrap_or(0);
        if let Some(coalescer) = &self.coalescer {
            // The errors a caller can act on come now; the worker's are only logged.
            let info = self.backend.table(table)?;
            if !info.enabled {
                return Err(BackendError::TableDisabled(text(table)).into());
            }
            if !info.families.iter().any(|f| f.name == family) {
                return Err(BackendError::NoSuchFamily {
                    table: text(table),
                    family: text(&family),
                }
                .into());
            }
            if coalescer.queue(table, &row, &family, &qualifier, amount) {
                return Ok(());
            }
        }
        self.backend.increment(
            table,
            &row,
            &[(family, qualifier, amount)],
            Durability::Sync,
        )?;
        Ok(())
    }

    /// incrementRows: each in order; the first failure ends the call.
    pub fn increment_rows(&self, incs: &[TIncrement]) -> Thrift1Result<()> {
        incs.iter().try_for_each(|i| self.increment(i))
    }

    /// append: `columns[i] += values[i]`; returns the new cells, HBase-ordered.
    pub fn append(&self, append: &TAppend) -> Thrift1Result<Vec<TCell>> {
        let table = append.table.as_deref().unwrap_or_default();
        let row = append.row.as_deref().unwrap_or_default();
        if table.is_empty() || row.is_empty() {
            return Err(Thrift1Error::Internal(
                "Must supply a table and a row key; can't append".into(),
            ));
        }
        check_row_len(row)?;
        let columns = append.columns.as_deref().unwrap_or_default();
        let values = append.values.as_deref().unwrap_or_default();
        if columns.len() != values.len() {
            return Err(Thrift1Error::Internal(format!(
                "Sizes of columns and values in tappend object are not matching \
                 ({} columns, {} values)",
                columns.len(),
                values.len()
            )));
        }
        let mut parts = Vec::with_capacity(columns.len());
        for (column, value) in columns.iter().zip(values) {
            let (family, qualifier) = qualified(column, "append")?;
            parts.push((family, qualifier, Bytes::copy_from_slice(value)));
        }
        if parts.is_empty() {
            return Ok(Vec::new());
        }
        let mut cells = self.backend.append(
            table,
            &Bytes::copy_from_slice(row),
            &parts,
            Durability::Sync,
        )?;
        sort_like_hbase(&mut cells);
        Ok(cells.into_iter().map(tcell).collect())
    }

    /// checkAndPut: atomically puts `mput` (at server time) when `column` holds
    /// `value`, or, with `value` empty or unset, when `column` has no value.
    pub fn check_and_put(
        &self,
        table: &[u8],
        row: Vec<u8>,
        column: &[u8],
        value: Vec<u8>,
        mput: &Mutation,
    ) -> Thrift1Result<bool> {
        check_row_len(&row)?;
        let (put_family, put_qualifier) = qualified(
            mput.column.as_deref().unwrap_or_default(),
            "checkAndPut put",
        )?;
        let (family, qualifier) = qualified(column, "checkAndPut check")?;
        let expected = (!value.is_empty()).then(|| Bytes::from(value));
        let condition = Condition::equals(family, qualifier, expected);
        let rm = RowMutation::new(row).put(
            put_family,
            put_qualifier,
            LATEST_TIMESTAMP,
            mput.value.clone().unwrap_or_default(),
        );
        let d = durability(mput.write_to_w_a_l.unwrap_or(true));
        Ok(self.backend.check_and_mutate(table, &condition, &rm, d)?)
    }
}

/// A table or family name for an error message.
fn text(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(is_delete: bool, column: &str, value: &str, wal: bool) -> Mutation {
        Mutation::new(
            is_delete,
            column.as_bytes().to_vec(),
            value.as_bytes().to_vec(),
            wal,
        )
    }

    #[test]
    fn deletes_and_puts_become_one_row_mutation() {
        let (rm, d) = row_mutation(
            b"r".to_vec(),
            vec![
                m(false, "cf:a", "1", true),
                m(true, "cf", "", true),
                m(true, "cf:b", "", true),
            ],
            7,
            BareFamilyPut::Skip,
        )
        .unwrap()
        .unwrap();
        assert_eq!(d, Durability::Sync);
        assert_eq!(rm.row.as_ref(), b"r");
        assert_eq!(
            rm.mutations,
            vec![
                EngineMutation::DeleteFamily {
                    family: Bytes::from_static(b"cf"),
                    timestamp: 7
                },
                EngineMutation::DeleteColumn {
                    family: Bytes::from_static(b"cf"),
                    qualifier: Bytes::from_static(b"b"),
                    timestamp: 7
                },
                EngineMutation::Put {
                    family: Bytes::from_static(b"cf"),
                    qualifier: Bytes::from_static(b"a"),
                    timestamp: 7,
                    value: Bytes::from_static(b"1")
                },
            ]
        );
    }

    #[test]
    fn bare_family_puts_are_skipped_or_rejected() {
        assert!(row_mutation(
            b"r".to_vec(),
            vec![m(false, "cf", "1", true)],
            1,
            BareFamilyPut::Skip
        )
        .unwrap()
        .is_none());
        let err = row_mutation(
            b"r".to_vec(),
            vec![m(false, "cf", "1", true)],
            1,
            BareFamilyPut::Reject,
        )
        .unwrap_err();
        assert!(
            matches!(err, Thrift1Error::Internal(ref msg) if msg.contains("cf")),
            "{err:?}"
        );
    }

    #[test]
    fn empty_qualifier_puts_are_kept() {
        let (rm, _) = row_mutation(
            b"r".to_vec(),
            vec![m(false, "cf:", "v", true)],
            1,
            BareFamilyPut::Reject,
        )
        .unwrap()
        .unwrap();
        assert!(
            matches!(&rm.mutations[0], EngineMutation::Put { qualifier, .. } if qualifier.is_empty())
        );
    }

    #[test]
    fn wal_is_skipped_only_when_every_mutation_says_so() {
        let (_, d) = row_mutation(
            b"r".to_vec(),
            vec![m(false, "cf:a", "1", false), m(false, "cf:b", "1", false)],
            1,
            BareFamilyPut::Skip,
        )
        .unwrap()
        .unwrap();
        assert_eq!(d, Durability::Skip);
        let (_, d) = row_mutation(
            b"r".to_vec(),
            vec![m(false, "cf:a", "1", false), m(true, "cf:b", "", true)],
            1,
            BareFamilyPut::Skip,
        )
        .unwrap()
        .unwrap();
        assert_eq!(d, Durability::Sync);
    }

    #[test]
    fn unset_values_are_empty() {
        let mutation = Mutation {
            is_delete: Some(false),
            column: Some(b"cf:a".to_vec()),
            value: None,
            write_to_w_a_l: Some(true),
        };
        let (rm, _) = row_mutation(b"r".to_vec(), vec![mutation], 1, BareFamilyPut::Skip)
            .unwrap()
            .unwrap();
        assert!(matches!(&rm.mutations[0], EngineMutation::Put { value, .. } if value.is_empty()));
    }
}
