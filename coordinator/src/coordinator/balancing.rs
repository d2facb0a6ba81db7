//! Balancing rounds carried out: tablets moved between regionservers by count,
//! by table spread and by request load, and a tablet too busy for any trade split
//! in two (the decisions themselves are `crate::balance`'s).
//!
//! Owns: `Coordinator::balance` and the moves it makes (`move_tablet`: close,
//! open elsewhere, catalog row), splits for load, and the figures of the last
//! round for metrics.
//! Must not: decide which tablet goes where (`crate::balance` does) or split for
//! size (`splitting`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use tabula_regionserver::{TabletReport, TabletService};
use tabula_storage::tablet::TabletDescriptor;

use crate::balance::{
    HotTablet, Loads, Movable, RequestRates, SplitFacts, Spread, Swap, MAX_MOVES_PER_ROUND,
};
use crate::catalog::TabletLocation;
use crate::tables::TableDescriptor;

use super::{CoordError, CoordResult, Coordinator};

/// What one balancing round knows and changes as tablets move.
struct Balanced<'a> {
    movable: Movable,
    spread: Spread,
    loads: Loads,
    rates: &'a mut RequestRates,
}

/// What the last balancing round learnt of each server (for metrics).
#[derive(Default)]
pub(super) struct RoundFigures {
    /// Tablets each server reported.
    tablets: BTreeMap<String, usize>,
    /// Requests per second of each server whose rate the round knew.
    requests_per_second: BTreeMap<String, f64>,
}

impl Coordinator {
    /// Moves user tablets from the server serving the most tablets to the one
    /// serving the fewest while they differ by two or more, each time a tablet of
    /// the table most crowded on the one against the other; then, with the counts
    /// even, swaps tablets between two servers where one table is crowded on each
    /// (by two or more), so every table's tablets spread over the servers, not
    /// only their number; then swaps a busy tablet of the server serving the most
    /// requests per second (rows read and mutated, from the counters the servers
    /// report, over the time since the last round) for a quieter one of another
    /// server, while that lowers the busiest server's rate by a tenth or more
    /// (HBase's balancer weighs read and write request counts the same way). At
    /// most [`MAX_MOVES_PER_ROUND`] moves. When no trade helps because one tablet
    /// carries too much of the busiest server's load, that tablet is split in two
    /// (see [`CoordinatorOptions::hot_split`]), and a later round trades a half
    /// away. Returns how many moved. With one server there is nothing to do.
    pub fn balance(&self) -> CoordResult<usize> {
        let servers = self.servers();
        if self.is_deposed() {
            return Ok(0);
        }
        let _g = self.admin.lock();
        let reports: Vec<(String, Vec<TabletReport>)> =
            servers.iter().map(|s| (s.name(), s.report())).collect();
        let mut load: BTreeMap<String, usize> = reports
            .iter()
            .map(|(s, report)| (s.clone(), report.len()))
            .collect();
        let facts: HashMap<u64, SplitFacts> = reports
            .iter()
            .flat_map(|(_, report)| {
                report.iter().map(|t| {
                    let facts = SplitFacts {
                        file_bytes: t.stats.file_bytes,
                        load_split: t.load_split.clone(),
                    };
                    (t.tablet, facts)
                })
            })
            .collect();
        let readings: Vec<(String, Vec<(u64, u64)>)> = reports
            .iter()
            .map(|(s, report)| {
                let requests = report
                    .iter()
                    .map(|t| (t.tablet, t.requests.reads.saturating_add(t.requests.writes)))
                    .collect();
                (s.clone(), requests)
            })
            .collect();
        let mut rates = self.request_rates.lock();
        let loads = rates.observe(&readings, Instant::now());
        *self.last_round.lock() = RoundFigures {
            tablets: load.clone(),
            requests_per_second: servers
                .iter()
                .filter_map(|s| {
                    let name = s.name();
                    loads.server(&name).map(|rate| (name, rate))
                })
                .collect(),
        };
        if servers.len() < 2 {
            return Ok(0);
        }
        let mut movable = Movable::new();
        let mut spread = Spread::default();
        for t in self.tables() {
            if !t.enabled {
                continue;
            }
            for loc in self.table_tablets(&t.name)? {
                spread.add(&loc.server, &t.name);
                movable
                    .entry(loc.server.clone())
                    .or_default()
                    .push((t.clone(), loc));
            }
        }
        let mut round = Balanced {
            movable,
            spread,
            loads,
            rates: &mut rates,
        };
        round.loads.require_reported(&round.movable);
        let mut moved = 0;
        while moved < MAX_MOVES_PER_ROUND {
            let most = load
                .iter()
                .max_by_key(|(_, n)| **n)
                .map(|(s, n)| (s.clone(), *n));
            let least = load
                .iter()
                .min_by_key(|(_, n)| **n)
                .map(|(s, n)| (s.clone(), *n));
            let (Some((from, high)), Some((to, low))) = (most, least) else {
                break;
            };
            if high < low + 2 {
                break;
            }
            let picked = round
                .movable
                .get_mut(&from)
                .and_then(|list| round.spread.take_most_crowded(list, &from, &to));
            let Some((table, loc)) = picked else {
                // Only catalog tablets make it the busiest: they stay.
                load.remove(&from);
                continue;
            };
            self.relocate(&mut round, &table, loc, &from, &to)?;
            load.entry(from).and_modify(|n| *n -= 1);
            load.entry(to).and_modify(|n| *n += 1);
            moved += 1;
        }
        while moved + 2 <= MAX_MOVES_PER_ROUND {
            let Some(swap) = round.spread.best_swap(&round.movable) else {
                break;
            };
            moved += self.trade(&swap, &mut round)?;
        }
        let moved_for_spread = moved;
        while moved + 2 <= MAX_MOVES_PER_ROUND {
            let Some(swap) = round.loads.best_swap(&round.movable, &mut round.spread) else {
                break;
            };
            let busiest = round.loads.server(&swap.a);
            moved += self.trade(&swap, &mut round)?;
            tracing::info!(
                busiest = %swap.a,
                requests_per_sec = busiest.unwrap_or(0.0),
                now = round.loads.server(&swap.a).unwrap_or(0.0),
                other = %swap.b,
                "traded a busy tablet for a quiet one"
            );
        }
        if moved > 0 {
            tracing::info!(
                moved,
                for_load = moved - moved_for_spread,
                "balanced tablets between regionservers"
            );
        }
        if moved == moved_for_spread {
            let hot =
                round
                    .loads
                    .hot_split(&round.movable, &facts, self.opts.hot_split, round.rates);
            if let Some(hot) = hot {
                self.split_for_load(&servers, hot, round.rates);
            }
        }
        Ok(moved)
    }

    /// Splits a tablet serving more requests than any trade could spread (see
    /// [`Loads::hot_split`]) where its sampled requests part, or at its data's
    /// middle; the next rounds, once the halves' rates are read, trade one of them
    /// away. Runs with the admin lock held.
    fn split_for_load(
        &self,
        servers: &[Arc<dyn TabletService>],
        hot: HotTablet,
        rates: &mut RequestRates,
    ) {
        let HotTablet {
            server,
            tablet,
            rate,
            at,
        } = hot;
        let Some(service) = servers.iter().find(|s| s.name() == server) else {
            return;
        };
        match self.split_holding_admin(service.as_ref(), tablet, at) {
            Ok(Some(children)) => {
                rates.split_for_load(tablet, rate, children, &server, Instant::now());
                tracing::info!(
                    tablet,
                    server,
                    requests_per_sec = rate,
                    "split a tablet too busy for any trade to spread"
                );
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(tablet, error = %e, "split for load failed"),
        }
    }

    /// Carries out `swap`: each tablet moves to the other server. Returns how many
    /// moved.
    fn trade(&self, swap: &Swap, round: &mut Balanced<'_>) -> CoordResult<usize> {
        let mut moved = 0;
        for (from, index, to) in [
            (&swap.a, swap.from_a, &swap.b),
            (&swap.b, swap.from_b, &swap.a),
        ] {
            let Some(list) = round.movable.get_mut(from) else {
                continue;
            };
            if index >= list.len() {
                continue;
            }
            let (table, loc) = list.swap_remove(index);
            self.relocate(round, &table, loc, from, to)?;
            moved += 1;
        }
        Ok(moved)
    }

    /// Moves a tablet taken out of the round's movable ones from `from` to `to`,
    /// and notes the move in what the round knows.
    fn relocate(
        &self,
        round: &mut Balanced<'_>,
        table: &TableDescriptor,
        loc: TabletLocation,
        from: &str,
        to: &str,
    ) -> CoordResult<()> {
        let tablet = loc.tablet_id;
        self.move_tablet(table, loc, to)?;
        round.spread.moved(&table.name, from, to);
        round.loads.moved(tablet, from, to);
        round.rates.opened(tablet, to, Instant::now());
        Ok(())
    }

    /// Moves one user tablet to server `to`: closed where it is (its memtable
    /// flushed to the shared storage), opened there, then the catalog row changed.
    /// Calls in between hear "not serving" and look again. If `to` cannot open it,
    /// it is opened again where it was.
    fn move_tablet(
        &self,
        table: &TableDescriptor,
        mut loc: TabletLocation,
        to: &str,
    ) -> CoordResult<()> {
        let from = self.server_or_err(&loc.server)?;
        let target = self.server_or_err(to)?;
        let desc = TabletDescriptor {
            id: loc.tablet_id,
            schema: table
                .schema()
                .map_err(|e| CoordError::InvalidArgument(e.to_string()))?,
            start_row: loc.start_row.clone(),
            end_row: loc.end_row.clone(),
        };
        from.close_tablet(loc.tablet_id)?;
        if let Err(e) = target.open_tablet(&desc) {
            if let Err(back) = from.open_tablet(&desc) {
                tracing::error!(tablet = loc.tablet_id, error = %back, "a tablet that could not move could not be reopened either");
            }
            return Err(e.into());
        }
        tracing::info!(tablet = loc.tablet_id, from = %loc.server, to, "moved a tablet");
        loc.server = to.to_owned();
        self.write_catalog(&loc)
    }

    /// Requests (rows read and row mutations) per second each server served
    /// between the last two balancing rounds, for the servers whose rate they
    /// could tell (not those with a tablet just opened).
    pub fn request_rates(&self) -> BTreeMap<String, f64> {
        self.last_round.lock().requests_per_second.clone()
    }

    /// How many tablets each server reported in the last balancing round (for
    /// metrics: no server is called).
    pub fn tablet_counts(&self) -> BTreeMap<String, usize> {
        self.last_round.lock().tablets.clone()
    }

    /// How many tablets each server holds (each server is asked).
    pub fn load(&self) -> HashMap<String, usize> {
        self.servers()
            .iter()
            .map(|s| (s.name(), s.report().len()))
            .collect()
    }
}
