//! Thrift2 data calls: get, getMultiple, exists, existsAll, put, putMultiple,
//! deleteSingle, deleteMultiple, checkAndPut, checkAndDelete, checkAndMutate,
//! increment, append, mutateRow.
//!
//! Owns: HBase's answers for these calls (empty TResults kept in position by
//! getMultiple, deleteMultiple returning the deletes that failed, the row of a
//! check-and-* mutation matching the checked row, one atomic RowMutation per
//! mutateRow).
//! Must not: parse Thrift structs itself beyond what `convert` offers.

use bytes::Bytes;
use tabula_storage::tablet::{CompareOp, Condition};
use tabula_storage::{Durability, RowMutation, TimeRange};
use tabula_thrift::hbase2::{
    TAppend, TCompareOperator, TDelete, TGet, TIncrement, TMutation, TPut, TResult, TRowMutations,
};

use super::convert::{compare_op, delete_mutation, durability, get_request, put_mutation, tresult};
use super::errors::{Thrift2Error, Thrift2Result};
use super::Thrift2Handler;
use crate::backend::{mutate_in_runs, BackendError};

/// Failures that concern the whole table, not one row: deleteMultiple reports them
/// as a TIOError instead of returning the delete.
fn is_table_level(e: &BackendError) -> bool {
    matches!(
        e,
        BackendError::TableNotFound(_)
            | BackendError::TableDisabled(_)
            | BackendError::NamespaceNotFound(_)
            | BackendError::Io { .. }
    )
}

/// The check of a check-and-*: `value <op> stored`, or absence when `value` is empty.
fn condition(family: Vec<u8>, qualifier: Vec<u8>, op: CompareOp, value: Vec<u8>) -> Condition {
    Condition {
        family: Bytes::from(family),
        qualifier: Bytes::from(qualifier),
        op,
        value: (!value.is_empty()).then(|| Bytes::from(value)),
        time_range: TimeRange::ALL,
    }
}

fn same_row(what: &str, expected: &[u8], got: &[u8]) -> Thrift2Result<()> {
    if expected != got {
        return Err(Thrift2Error::Invalid(format!(
            "the {what}'s row ({}) does not match the row of the call ({})",
            String::from_utf8_lossy(got),
            String::from_utf8_lossy(expected)
        )));
    }
    Ok(())
}

impl Thrift2Handler {
    /// get: the row's cells, or an empty TResult (no row) when nothing matches.
    pub fn get(&self, table: &[u8], get: TGet) -> Thrift2Result<TResult> {
        let request = get_request(get)?;
        let cells = self.backend.get(table, &request.row, &request.spec)?;
        if request.existence_only {
            return Ok(tresult(&request.row, Vec::new(), false));
        }
        let cells = request.window.apply(cells);
        Ok(tresult(&request.row, cells, false))
    }

    /// getMultiple: one TResult per TGet, in order.
    pub fn get_multiple(&self, table: &[u8], gets: Vec<TGet>) -> Thrift2Result<Vec<TResult>> {
        gets.into_iter().map(|g| self.get(table, g)).collect()
    }

    /// exists: whether the TGet finds any cell.
    pub fn exists(&self, table: &[u8], get: TGet) -> Thrift2Result<bool> {
        let request = get_request(get)?;
        let cells = self.backend.get(table, &request.row, &request.spec)?;
        Ok(!request.window.apply(cells).is_empty())
    }

    /// existsAll: exists for each TGet, in order.
    pub fn exists_all(&self, table: &[u8], gets: Vec<TGet>) -> Thrift2Result<Vec<bool>> {
        gets.into_iter().map(|g| self.exists(table, g)).collect()
    }

    /// The durability a write gets: the one it names, else its table's.
    fn resolve(&self, table: &[u8], named: Option<Durability>) -> Thrift2Result<Durability> {
        self.resolver(table)(named)
    }

    /// [`Self::resolve`] for many writes of one table, looking its durability up
    /// once.
    fn resolver<'a>(
        &'a self,
        table: &'a [u8],
    ) -> impl FnMut(Option<Durability>) -> Thrift2Result<Durability> + 'a {
        let mut table_default = None;
        move |named| match (named, table_default) {
            (Some(d), _) | (None, Some(d)) => Ok(d),
            (None, None) => {
                let d = self.backend.table_durability(table)?;
                table_default = Some(d);
                Ok(d)
            }
        }
    }

    /// TRowMutations as one row mutation; every put and delete must be of its row.
    /// The row gets the strongest durability its mutations ask for, a mutation
    /// naming none asking for the table's (as HBase does).
    fn row_mutations(
        &self,
        table: &[u8],
        mutations: TRowMutations,
    ) -> Thrift2Result<(RowMutation, Option<Durability>)> {
        let mut rm = RowMutation::new(mutations.row);
        let mut resolve = self.resolver(table);
        let mut d: Option<Durability> = None;
        for m in mutations.mutations {
            let (part, pd) = match m {
                TMutation::Put(p) => put_mutation(p)?,
                TMutation::DeleteSingle(del) => delete_mutation(del)?,
            };
            same_row("mutation", &rm.row, &part.row)?;
            rm.mutations.extend(part.mutations);
            let pd = resolve(pd)?;
            d = Some(match d {
                None => pd,
                Some(prev) => prev.strongest(pd),
            });
        }
        Ok((rm, d))
    }

    /// put: one atomic row mutation.
    pub fn put(&self, table: &[u8], put: TPut) -> Thrift2Result<()> {
        let (rm, d) = put_mutation(put)?;
        let d = self.resolve(table, d)?;
        Ok(self.backend.mutate(table, &rm, d)?)
    }

    /// putMultiple: every put is checked first, then each row is written on its own
    /// (no cross-row atomicity); the first failure is reported after the others ran.
    pub fn put_multiple(&self, table: &[u8], puts: Vec<TPut>) -> Thrift2Result<()> {
        let mut resolve = self.resolver(table);
        let rows = puts
            .into_iter()
            .map(|p| {
                let (rm, d) = put_mutation(p)?;
                Ok((rm, resolve(d)?))
            })
            .collect::<Thrift2Result<Vec<_>>>()?;
        let mut first_error = None;
        for r in mutate_in_runs(self.backend.as_ref(), table, rows)? {
            if let Err(e) = r {
                if is_table_level(&e) {
                    return Err(e.into());
                }
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// deleteSingle.
    pub fn delete_single(&self, table: &[u8], delete: TDelete) -> Thrift2Result<()> {
        let (rm, d) = delete_mutation(delete)?;
        let d = self.resolve(table, d)?;
        Ok(self.backend.mutate(table, &rm, d)?)
    }

    /// deleteMultiple: applies each delete; returns those that failed for a reason of
    /// their own row. A table-level failure is an error.
    pub fn delete_multiple(
        &self,
        table: &[u8],
        deletes: Vec<TDelete>,
    ) -> Thrift2Result<Vec<TDelete>> {
        let mut failed = Vec::new();
        let mut resolve = self.resolver(table);
        for delete in deletes {
            let (rm, d) = match delete_mutation(delete.clone()) {
                Ok(x) => x,
                Err(e) => {
                    tracing::debug!(error = %e, "deleteMultiple: delete refused");
                    failed.push(delete);
                    continue;
                }
            };
            match self.backend.mutate(table, &rm, resolve(d)?) {
                Ok(()) => {}
                Err(e) if is_table_level(&e) => return Err(e.into()),
                Err(e) => {
                    tracing::debug!(error = %e, "deleteMultiple: delete failed");
                    failed.push(delete);
                }
            }
        }
        Ok(failed)
    }

    fn check_and(
        &self,
        table: &[u8],
        row: &[u8],
        condition: Condition,
        mutation: &RowMutation,
        d: Option<Durability>,
    ) -> Thrift2Result<bool> {
        same_row("mutation", row, &mutation.row)?;
        let d = self.resolve(table, d)?;
        Ok(self
            .backend
            .check_and_mutate(table, &condition, mutation, d)?)
    }

    /// checkAndPut: the put is applied when family:qualifier equals `value` (or is
    /// absent when `value` is empty).
    pub fn check_and_put(
        &self,
        table: &[u8],
        row: Vec<u8>,
        family: Vec<u8>,
        qualifier: Vec<u8>,
        value: Vec<u8>,
        put: TPut,
    ) -> Thrift2Result<bool> {
        let (rm, d) = put_mutation(put)?;
        let condition = condition(family, qualifier, CompareOp::Equal, value);
        self.check_and(table, &row, condition, &rm, d)
    }

    /// checkAndDelete: like checkAndPut with a delete.
    pub fn check_and_delete(
        &self,
        table: &[u8],
        row: Vec<u8>,
        family: Vec<u8>,
        qualifier: Vec<u8>,
        value: Vec<u8>,
        delete: TDelete,
    ) -> Thrift2Result<bool> {
        let (rm, d) = delete_mutation(delete)?;
        let condition = condition(family, qualifier, CompareOp::Equal, value);
        self.check_and(table, &row, condition, &rm, d)
    }

    /// checkAndMutate: the row mutations are applied atomically when
    /// `value <op> stored` holds (absence when `value` is empty).
    #[allow(clippy::too_many_arguments)]
    pub fn check_and_mutate(
        &self,
        table: &[u8],
        row: Vec<u8>,
        family: Vec<u8>,
        qualifier: Vec<u8>,
        op: TCompareOperator,
        value: Vec<u8>,
        mutations: TRowMutations,
    ) -> Thrift2Result<bool> {
        let op = compare_op(op)?;
        let (rm, d) = self.row_mutations(table, mutations)?;
        let condition = condition(family, qualifier, op, value);
        self.check_and(table, &row, condition, &rm, d)
    }

    /// increment: 8-byte big-endian counters, amount default 1; the new values, or
    /// an empty TResult when returnResults is false.
    pub fn increment(&self, table: &[u8], inc: TIncrement) -> Thrift2Result<TResult> {
        if inc.columns.is_empty() {
            return Err(Thrift2Error::Invalid(
                "TIncrement has no columns to increment".to_string(),
            ));
        }
        let row = Bytes::from(inc.row);
        let columns: Vec<(Bytes, Bytes, i64)> = inc
            .columns
            .into_iter()
            .map(|c| {
                (
                    Bytes::from(c.family),
                    Bytes::from(c.qualifier),
                    c.amount.unwrap_or(1),
                )
            })
            .collect();
        let cells = self.backend.increment(
            table,
            &row,
            &columns,
            self.resolve(table, durability(inc.durability))?,
        )?;
        if !inc.return_results.unwrap_or(true) {
            return Ok(tresult(&row, Vec::new(), false));
        }
        Ok(tresult(&row, cells, false))
    }

    /// append: bytes appended to each column; the new values, or an empty TResult
    /// when returnResults is false.
    pub fn append(&self, table: &[u8], append: TAppend) -> Thrift2Result<TResult> {
        if append.columns.is_empty() {
            return Err(Thrift2Error::Invalid(
                "TAppend has no columns to append to".to_string(),
            ));
        }
        let row = Bytes::from(append.row);
        let columns: Vec<(Bytes, Bytes, Bytes)> = append
            .columns
            .into_iter()
            .map(|c| (Bytes::from(c.family), Bytes::from(c.qualifier), c.value))
            .collect();
        let cells = self.backend.append(
            table,
            &row,
            &columns,
            self.resolve(table, durability(append.durability))?,
        )?;
        if !append.return_results.unwrap_or(true) {
            return Ok(tresult(&row, Vec::new(), false));
        }
        Ok(tresult(&row, cells, false))
    }

    /// mutateRow: puts and deletes on one row, applied atomically.
    pub fn mutate_row(&self, table: &[u8], mutations: TRowMutations) -> Thrift2Result<()> {
        let (rm, d) = self.row_mutations(table, mutations)?;
        if rm.mutations.is_empty() {
            return Ok(());
        }
        Ok(self.backend.mutate(table, &rm, self.resolve(table, d)?)?)
    }
}
