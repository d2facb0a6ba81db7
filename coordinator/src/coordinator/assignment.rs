//! Assignment: every tablet of the catalog opened on a live regionserver, at
//! start-up and after a server is lost, with the catalog repaired first (gaps
//! filled from a table's stored split plan, splits stopped half-way completed).
//!
//! Owns: `assign`, `place`, recovering a dead server's commit log, catalog repair,
//! and opening or closing all of one table's tablets.
//! Must not: move tablets between live servers (`balancing` does).

use std::collections::HashSet;
use std::sync::Arc;

use bytes::Bytes;
use tabula_regionserver::TabletService;
use tabula_storage::tablet::TabletDescriptor;

use crate::catalog::{
    TabletLocation, FIRST_META_TABLET_ID, META_TABLE, ROOT_TABLE, ROOT_TABLET_ID,
};
use crate::directory::{ROOT_FILE, SERVERS_PREFIX};
use crate::lock::Txn;
use crate::tables::{decode_split_plan, TableDescriptor};

use super::{
    cut_at, deleting_path, plan_path, shown, CoordError, CoordResult, Coordinator, Placement,
};

impl Coordinator {
    /// Makes every tablet served (root, METADATA, then the tablets of enabled
    /// tables, recording where each went): at start-up (`reopen_live`) every tablet is
    /// opened, on the live server the catalog names (this process's own server lost
    /// them with the previous process; opening is idempotent on a remote one that
    /// kept them) or elsewhere; later, only tablets of servers that are gone move.
    /// A gone server's commit log is split before the first of its tablets opens
    /// elsewhere. Returns how many tablets moved. Callers hold the admin lock.
    pub(super) fn assign(&self, reopen_live: bool) -> CoordResult<usize> {
        let mut recovered = HashSet::new();
        let mut placement = Placement::new();
        let mut moved = 0;
        // Root tablet.
        let root_server = match self.lock.get(ROOT_FILE)? {
            Some(v) => String::from_utf8_lossy(&v.value).into_owned(),
            None => String::new(),
        };
        let root = Self::catalog_descriptor(ROOT_TABLET_ID, ROOT_TABLE, Bytes::new(), Bytes::new());
        if let Some(server) = self.place(
            &root_server,
            &root,
            reopen_live,
            &mut recovered,
            &mut placement,
        )? {
            self.fenced(Txn::new().put(ROOT_FILE, server.name().into_bytes()))?;
            moved += 1;
        }
        // METADATA tablets listed in the root; a new cluster gets its first one.
        let mut metas = self.meta_tablets()?;
        if metas.is_empty() {
            metas.push(TabletLocation {
                table: Bytes::from_static(META_TABLE.as_bytes()),
                start_row: Bytes::new(),
                end_row: Bytes::new(),
                tablet_id: FIRST_META_TABLET_ID,
                server: String::new(),
            });
        }
        for mut meta in metas {
            let desc = Self::catalog_descriptor(
                meta.tablet_id,
                META_TABLE,
                meta.start_row.clone(),
                meta.end_row.clone(),
            );
            if let Some(server) = self.place(
                &meta.server,
                &desc,
                reopen_live,
                &mut recovered,
                &mut placement,
            )? {
                meta.server = server.name();
                self.write_catalog(&meta)?;
                moved += 1;
            }
        }
        // User tablets.
        for t in self.tables() {
            if reopen_live {
                if self.lock.get(&deleting_path(&t.name))?.is_some() {
                    // A deleteTable stopped midway goes on, like a truncate.
                    self.finish_delete(&t)?;
                    continue;
                }
                if let (false, Some(keys)) = (t.enabled, self.stored_plan(&t.name)?) {
                    // A truncateTable stopped midway: it goes on (as HBase's
                    // procedure rolls forward); its new tablets open as they are made.
                    self.finish_truncate(t, &keys)?;
                    continue;
                }
                self.repair_catalog(&t)?;
            }
            if !t.enabled {
                continue;
            }
            let schema = t
                .schema()
                .map_err(|e| CoordError::InvalidArgument(e.to_string()))?;
            for mut loc in self.table_tablets(&t.name)? {
                let desc = TabletDescriptor {
                    id: loc.tablet_id,
                    schema: schema.clone(),
                    start_row: loc.start_row.clone(),
                    end_row: loc.end_row.clone(),
                };
                if let Some(server) = self.place(
                    &loc.server,
                    &desc,
                    reopen_live,
                    &mut recovered,
                    &mut placement,
                )? {
                    loc.server = server.name();
                    self.write_catalog(&loc)?;
                    moved += 1;
                }
            }
        }
        Ok(moved)
    }

    /// Opens tablet `desc`, last served by `server`: there again when that server
    /// is live (only when `reopen_live`; `None` is returned, the catalog stays),
    /// otherwise, after recovering that server's log (once per `recovered`), on the
    /// least loaded live server, which is returned.
    pub(super) fn place(
        &self,
        server: &str,
        desc: &TabletDescriptor,
        reopen_live: bool,
        recovered: &mut HashSet<String>,
        placement: &mut Placement,
    ) -> CoordResult<Option<Arc<dyn TabletService>>> {
        if let Some(live) = self.server(server) {
            if reopen_live {
                live.open_tablet(desc)?;
                // This process's own servers start empty; a remote one kept its
                // tablets, so reopening there adds none.
                if self.servers.contains_key(server) {
                    placement.opened_on(server);
                }
            }
            return Ok(None);
        }
        if !server.is_empty() && !recovered.contains(server) {
            self.recover_log_of(server)?;
            recovered.insert(server.to_owned());
        }
        let target = placement.pick(self)?;
        target.open_tablet(desc)?;
        Ok(Some(target))
    }

    /// Splits the commit log of the gone server `name` into recovered edits, holding
    /// its registration lock meanwhile so that a server restarting under that name
    /// waits until its old log is split.
    fn recover_log_of(&self, name: &str) -> CoordResult<()> {
        let path = format!("{SERVERS_PREFIX}{name}");
        let session = self.held.read().0;
        let Some(token) = self.lock.try_lock(&path, session, b"recovering")? else {
            return Err(CoordError::ServerAlive(name.to_owned()));
        };
        let recovery = match self.servers.values().next() {
            Some(local) => Ok(Arc::clone(local)),
            None => Placement::new().pick(self),
        };
        let result = recovery.and_then(|s| s.recover_log_of(name).map_err(CoordError::from));
        if let Err(e) = self.lock.release(&token) {
            tracing::warn!(server = %name, error = %e, "releasing a recovered server's lock");
        }
        result
    }

    /// Repairs what an operation the previous process did not finish left in table
    /// `t`'s catalog rows: first a split stopped between its two rows, then rows no
    /// tablet covers (see the two steps). Reads the rows once, and again only
    /// after a completed split changed them.
    pub(super) fn repair_catalog(&self, t: &TableDescriptor) -> CoordResult<()> {
        let mut tablets = self.sorted_table_tablets(&t.name)?;
        if self.complete_interrupted_splits(&t.name, &tablets)? > 0 {
            tablets = self.sorted_table_tablets(&t.name)?;
        }
        let plan = self.stored_plan(&t.name)?;
        self.fill_tablet_gaps(t, &tablets, plan.as_deref().unwrap_or_default())?;
        if plan.is_some() {
            self.fenced(Txn::new().delete(plan_path(&t.name)))?;
        }
        Ok(())
    }

    /// The split keys a `createTable` or `truncateTable` of table `name` stored
    /// before making its tablets, if it has not finished.
    fn stored_plan(&self, name: &[u8]) -> CoordResult<Option<Vec<Bytes>>> {
        let path = plan_path(name);
        match self.lock.get(&path)? {
            Some(v) => Ok(Some(
                decode_split_plan(&v.value).ok_or(CoordError::Corrupt { what: path })?,
            )),
            None => Ok(None),
        }
    }

    /// Table `name`'s catalog rows by start row, and of two with the same start the
    /// one ending first (an empty end row is the table's end).
    fn sorted_table_tablets(&self, name: &[u8]) -> CoordResult<Vec<TabletLocation>> {
        let mut tablets = self.table_tablets(name)?;
        tablets.sort_by(|a, b| {
            a.start_row.cmp(&b.start_row).then_with(|| {
                match (a.end_row.is_empty(), b.end_row.is_empty()) {
                    (true, true) => std::cmp::Ordering::Equal,
                    (true, false) => std::cmp::Ordering::Greater,
                    (false, true) => std::cmp::Ordering::Less,
                    (false, false) => a.end_row.cmp(&b.end_row),
                }
            })
        });
        Ok(tablets)
    }

    /// Gives every range of table `t`'s rows that no catalog row covers an empty
    /// tablet of its own. Only an operation the process did not finish leaves such
    /// a gap: a `createTable` that stored the table's descriptor but not all its
    /// first tablets (the client was never answered, and asking again would only
    /// hear that the table exists), or a `truncateTable` that had enabled the
    /// table but not made all its new tablets. A table with a gap cannot take a
    /// row in it; with the gap filled, it can. The new tablets are opened
    /// with the table's other tablets (enabled tables only). Returns how many were
    /// made.
    /// `tablets` are the table's rows as [`Self::sorted_table_tablets`] reads them;
    /// a gap is cut at the `planned` split keys inside it (those of an unfinished
    /// `createTable` or `truncateTable`), so the table gets the tablets asked for.
    fn fill_tablet_gaps(
        &self,
        t: &TableDescriptor,
        tablets: &[TabletLocation],
        planned: &[Bytes],
    ) -> CoordResult<usize> {
        let mut gaps: Vec<(Bytes, Bytes)> = Vec::new();
        let mut covered_to = Some(Bytes::new());
        for loc in tablets {
            match &covered_to {
                Some(end) if loc.start_row > *end => {
                    gaps.push((end.clone(), loc.start_row.clone()));
                }
                _ => {}
            }
            // `None` once a tablet runs to the table's end.
            covered_to = match (&covered_to, loc.end_row.is_empty()) {
                (_, true) => None,
                (Some(end), false) => Some(std::cmp::max(end, &loc.end_row).clone()),
                (None, false) => None,
            };
        }
        if let Some(end) = covered_to {
            gaps.push((end, Bytes::new()));
        }
        let gaps = cut_at(gaps, planned);
        if gaps.is_empty() {
            return Ok(0);
        }
        let first_id = self.allocate_ids(gaps.len() as u64)?;
        for (i, (start, end)) in gaps.iter().enumerate() {
            let id = first_id + i as u64;
            self.write_catalog(&TabletLocation {
                table: t.name.clone(),
                start_row: start.clone(),
                end_row: end.clone(),
                tablet_id: id,
                server: String::new(),
            })?;
            tracing::warn!(
                table = %shown(&t.name),
                tablet = id,
                start = %shown(start),
                end = %shown(end),
                "gave rows no tablet covered an empty tablet (an unfinished create, delete or truncate)"
            );
        }
        Ok(gaps.len())
    }

    /// Completes the splits of table `name` that stopped between their two catalog
    /// rows. [`Self::split_tablet`] writes the left child's row, then the right
    /// child's over the parent's; a process that ended between the two leaves the
    /// left child `[s, at)` beside the parent `[s, e)`, overlapping it. The storage
    /// step had stored both children's manifests before either row was written, so
    /// the split is finished here rather than undone (the left child may hold
    /// acknowledged writes the parent does not): the right child, whose id follows
    /// the left one's, takes the parent's row over `[at, e)`. Rows that overlap in
    /// any other way are left as they are, with an error in the log. `tablets` are
    /// the table's rows as [`Self::sorted_table_tablets`] reads them. Returns how
    /// many splits were completed.
    pub(super) fn complete_interrupted_splits(
        &self,
        name: &[u8],
        tablets: &[TabletLocation],
    ) -> CoordResult<usize> {
        let mut completed = 0;
        for pair in tablets.windows(2) {
            let [left, next] = pair else { continue };
            let overlaps = !left.end_row.is_empty() && next.start_row < left.end_row;
            if !overlaps {
                continue;
            }
            let left_of_parent = next.start_row == left.start_row;
            let right_id = left.tablet_id.checked_add(1);
            match right_id.filter(|_| left_of_parent) {
                Some(right_id) => {
                    self.write_catalog(&TabletLocation {
                        table: next.table.clone(),
                        start_row: left.end_row.clone(),
                        end_row: next.end_row.clone(),
                        tablet_id: right_id,
                        server: next.server.clone(),
                    })?;
                    tracing::warn!(
                        table = %shown(name),
                        parent = next.tablet_id,
                        left = left.tablet_id,
                        right = right_id,
                        "completed a split that stopped between its catalog rows"
                    );
                    completed += 1;
                }
                None => tracing::error!(
                    table = %shown(name),
                    first = left.tablet_id,
                    second = next.tablet_id,
                    "catalog rows overlap in a way no split leaves; left as they are"
                ),
            }
        }
        Ok(completed)
    }

    pub(super) fn open_table_tablets(&self, t: &TableDescriptor) -> CoordResult<()> {
        let schema = t
            .schema()
            .map_err(|e| CoordError::InvalidArgument(e.to_string()))?;
        let mut placement = Placement::new();
        for mut loc in self.table_tablets(&t.name)? {
            let server = placement.pick(self)?;
            server.open_tablet(&TabletDescriptor {
                id: loc.tablet_id,
                schema: schema.clone(),
                start_row: loc.start_row.clone(),
                end_row: loc.end_row.clone(),
            })?;
            loc.server = server.name();
            self.write_catalog(&loc)?;
        }
        Ok(())
    }

    pub(super) fn close_table_tablets(&self, name: &[u8]) -> CoordResult<Vec<TabletLocation>> {
        let tablets = self.table_tablets(name)?;
        for loc in &tablets {
            if let Some(s) = self.server(&loc.server) {
                s.close_tablet(loc.tablet_id)?;
            }
        }
        Ok(tablets)
    }

    // ------------------------------------------------------------ namespaces
}
