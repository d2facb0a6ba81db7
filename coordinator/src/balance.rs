//! Balancing decisions: which user tablets trade places between regionservers so
//! that each serves a fair share of the tablets, of every table's tablets, and of
//! the requests.
//!
//! Owns: [`Spread`] (each table's tablets per server), [`RequestRates`] (the
//! request counters regionservers report, turned into rates between two readings,
//! and which tablets were split for load) and [`Loads`] (per-tablet and
//! per-server request rates, the trade that lowers the busiest server's rate the
//! most, and the tablet to split when no trade can: [`Loads::hot_split`]).
//! Must not: move tablets or call servers: `Coordinator::balance` does, as these
//! decide.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tabula_storage::{LoadSplit, SplitRule};

use crate::catalog::TabletLocation;
use crate::tables::TableDescriptor;

/// Server name -> the user tablets it serves that may move, with their tables.
pub(crate) type Movable = HashMap<String, Vec<(TableDescriptor, TabletLocation)>>;

/// Two readings of a tablet's counters closer than this give no rate: too few
/// requests fall between them to say anything.
const MIN_SAMPLE_SPAN: Duration = Duration::from_millis(200);
/// Below this many requests per second no server is busy enough to be worth a
/// move (moving a tablet flushes its memtable and makes its clients look again).
const MIN_BUSY_RATE: f64 = 20.0;
/// A trade must lower the busiest server's rate by at least this share of it.
const MIN_GAIN: f64 = 0.1;

/// A tablet split for load that still carries this share of its parent's rate
/// holds its load in rows too few for another split to part: it is not split for
/// load again.
const CONCENTRATED: f64 = 0.9;

/// When a tablet too busy for any trade to help is split in two.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HotSplitRule {
    /// Requests per second a tablet must serve (0 or less: never).
    pub min_rate: f64,
    /// Bytes of files it must hold (less is not worth a tablet of its own).
    pub min_bytes: u64,
}

/// What a round knows of a tablet beside its rate, for a split for load.
#[derive(Debug, Clone, Default)]
pub(crate) struct SplitFacts {
    /// Bytes of its files.
    pub(crate) file_bytes: u64,
    /// Where a split would part its recent requests, as its server sampled them.
    pub(crate) load_split: LoadSplit,
}

/// A tablet to split for load.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HotTablet {
    pub(crate) server: String,
    pub(crate) tablet: u64,
    /// Its requests per second.
    pub(crate) rate: f64,
    /// Where to split it: the row parting its sampled requests, or `None` for its
    /// data's middle (too few requests were sampled).
    pub(crate) at: Option<Bytes>,
}

/// Most tablets one balancing round moves.
pub(crate) const MAX_MOVES_PER_ROUND: usize = 16;

/// How many of each table's movable tablets each server serves, for balancing.
#[derive(Debug, Default)]
pub(crate) struct Spread(HashMap<(String, Bytes), usize>);

/// Two tablets to trade between servers `a` and `b`: the one at `from_a` in
/// `a`'s list of movable tablets goes to `b`, the one at `from_b` in `b`'s to `a`.
#[derive(Debug)]
pub(crate) struct Swap {
    pub(crate) a: String,
    pub(crate) b: String,
    pub(crate) from_a: usize,
    pub(crate) from_b: usize,
}

impl Spread {
    pub(crate) fn add(&mut self, server: &str, table: &Bytes) {
        *self
            .0
            .entry((server.to_owned(), table.clone()))
            .or_default() += 1;
    }

    pub(crate) fn on(&self, server: &str, table: &Bytes) -> usize {
        self.0
            .get(&(server.to_owned(), table.clone()))
            .copied()
            .unwrap_or(0)
    }

    /// How many more of `table`'s tablets `from` serves than `to`.
    pub(crate) fn crowding(&self, table: &Bytes, from: &str, to: &str) -> i64 {
        let count = |s: &str| i64::try_from(self.on(s, table)).unwrap_or(i64::MAX);
        count(from).saturating_sub(count(to))
    }

    pub(crate) fn moved(&mut self, table: &Bytes, from: &str, to: &str) {
        if let Some(n) = self.0.get_mut(&(from.to_owned(), table.clone())) {
            *n = n.saturating_sub(1);
        }
        self.add(to, table);
    }

    /// Takes from `list` (server `from`'s tablets) one of the table most crowded on
    /// `from` against `to`.
    pub(crate) fn take_most_crowded(
        &self,
        list: &mut Vec<(TableDescriptor, TabletLocation)>,
        from: &str,
        to: &str,
    ) -> Option<(TableDescriptor, TabletLocation)> {
        let index = list
            .iter()
            .enumerate()
            .max_by_key(|(_, (t, _))| self.crowding(&t.name, from, to))
            .map(|(i, _)| i)?;
        Some(list.swap_remove(index))
    }

    /// The trade between two servers that spreads tables the most: a tablet of a
    /// table crowded on `a` against `b` by two or more for one of a table crowded
    /// on `b` against `a` by two or more.
    pub(crate) fn best_swap(&self, movable: &Movable) -> Option<Swap> {
        let most_crowded = |from: &str, to: &str| -> Option<(usize, i64)> {
            movable
                .get(from)?
                .iter()
                .enumerate()
                .map(|(i, (t, _))| (i, self.crowding(&t.name, from, to)))
                .filter(|(_, c)| *c >= 2)
                .max_by_key(|(_, c)| *c)
        };
        let mut best: Option<(i64, Swap)> = None;
        let servers: Vec<&String> = movable.keys().collect();
        for (n, a) in servers.iter().enumerate() {
            for b in servers.iter().skip(n + 1) {
                let (Some((from_a, ca)), Some((from_b, cb))) =
                    (most_crowded(a, b), most_crowded(b, a))
                else {
                    continue;
                };
                if best.as_ref().is_none_or(|(score, _)| ca + cb > *score) {
                    let swap = Swap {
                        a: (*a).clone(),
                        b: (*b).clone(),
                        from_a,
                        from_b,
                    };
                    best = Some((ca + cb, swap));
                }
            }
        }
        best.map(|(_, swap)| swap)
    }

    /// Whether trading a tablet of `out_of_a` (from `a` to `b`) for one of
    /// `out_of_b` (from `b` to `a`) would leave a table crowded on each of them by
    /// two or more: the trade [`Spread::best_swap`] would then undo.
    pub(crate) fn trade_crowds(
        &mut self,
        out_of_a: &Bytes,
        out_of_b: &Bytes,
        a: &str,
        b: &str,
    ) -> bool {
        self.moved(out_of_a, a, b);
        self.moved(out_of_b, b, a);
        let tables: HashSet<&Bytes> = self
            .0
            .keys()
            .filter(|(s, _)| s == a || s == b)
            .map(|(_, t)| t)
            .collect();
        let crowded = |from: &str, to: &str| tables.iter().any(|t| self.crowding(t, from, to) >= 2);
        let crowds = crowded(a, b) && crowded(b, a);
        self.moved(out_of_a, b, a);
        self.moved(out_of_b, a, b);
        crowds
    }
}

/// The last reading of one tablet's counters.
#[derive(Debug, Clone)]
struct Reading {
    server: String,
    requests: u64,
    at: Instant,
}

/// The request counters of every tablet as last read, to turn the next reading
/// into a rate. Counters start at zero when a tablet opens on a server, so a
/// reading from another server, or one lower than the last, starts over.
#[derive(Debug, Default)]
pub(crate) struct RequestRates {
    last: HashMap<u64, Reading>,
    /// Children of splits for load -> their parent's rate when it was split.
    split_from: HashMap<u64, f64>,
}

impl RequestRates {
    /// Takes this round's readings (per server: tablet, requests served so far)
    /// taken at `now`, and returns the rates they show: a tablet's rate is known
    /// when it was read on the same server at least [`MIN_SAMPLE_SPAN`] before, and
    /// a server's when every tablet it reported is. Tablets nobody reported are
    /// forgotten.
    pub(crate) fn observe(
        &mut self,
        readings: &[(String, Vec<(u64, u64)>)],
        now: Instant,
    ) -> Loads {
        let mut loads = Loads::default();
        let mut seen = HashSet::new();
        for (server, tablets) in readings {
            let mut total = Some(0.0);
            for &(tablet, requests) in tablets {
                seen.insert(tablet);
                let rate = self.read(server, tablet, requests, now);
                match rate {
                    Some(rate) => {
                        loads.tablets.insert(tablet, rate);
                        total = total.map(|t| t + rate);
                    }
                    None => total = None,
                }
            }
            loads.servers.insert(server.clone(), total);
        }
        self.last.retain(|tablet, _| seen.contains(tablet));
        self.split_from.retain(|tablet, _| seen.contains(tablet));
        loads
    }

    /// `parent`, serving `rate` requests per second, was split for load into
    /// `children` on `server` at `now` (their counters at zero).
    pub(crate) fn split_for_load(
        &mut self,
        parent: u64,
        rate: f64,
        children: [u64; 2],
        server: &str,
        now: Instant,
    ) {
        self.last.remove(&parent);
        for child in children {
            self.opened(child, server, now);
            self.split_from.insert(child, rate);
        }
    }

    /// True when `tablet`, split for load from a parent, still serves most of
    /// the parent's rate (see [`CONCENTRATED`]).
    fn concentrated(&self, tablet: u64, rate: f64) -> bool {
        self.split_from
            .get(&tablet)
            .is_some_and(|parent| rate >= CONCENTRATED * parent)
    }

    /// One tablet's reading: its rate since the last one, if that says anything.
    fn read(&mut self, server: &str, tablet: u64, requests: u64, now: Instant) -> Option<f64> {
        let fresh = Reading {
            server: server.to_owned(),
            requests,
            at: now,
        };
        let Some(last) = self.last.get_mut(&tablet) else {
            self.last.insert(tablet, fresh);
            return None;
        };
        if last.server != server || requests < last.requests {
            *last = fresh;
            return None;
        }
        let span = now.checked_duration_since(last.at)?;
        if span < MIN_SAMPLE_SPAN {
            // Too soon: keep the older reading for a longer span next time.
            return None;
        }
        let rate = (requests - last.requests) as f64 / span.as_secs_f64();
        *last = fresh;
        Some(rate)
    }

    /// `tablet` was opened on `server` at `now`, its counters at zero: the next
    /// reading there gives its rate since.
    pub(crate) fn opened(&mut self, tablet: u64, server: &str, now: Instant) {
        self.last.insert(
            tablet,
            Reading {
                server: server.to_owned(),
                requests: 0,
                at: now,
            },
        );
    }
}

/// Request rates (requests per second) of tablets and servers over the last
/// span between readings, where known.
#[derive(Debug, Default)]
pub(crate) struct Loads {
    tablets: HashMap<u64, f64>,
    /// `None`: some tablet of the server has no known rate, so neither has it.
    servers: HashMap<String, Option<f64>>,
}

impl Loads {
    /// A server's rate, when known.
    pub(crate) fn server(&self, name: &str) -> Option<f64> {
        self.servers.get(name).copied().flatten()
    }

    /// Servers serving a movable tablet they did not report have no known rate.
    pub(crate) fn require_reported(&mut self, movable: &Movable) {
        for (server, list) in movable {
            if list
                .iter()
                .any(|(_, loc)| !self.tablets.contains_key(&loc.tablet_id))
            {
                self.servers.insert(server.clone(), None);
            }
        }
    }

    /// `tablet` moved from `from` to `to`: its rate goes with it (when unknown,
    /// neither server's rate is known any more).
    pub(crate) fn moved(&mut self, tablet: u64, from: &str, to: &str) {
        match self.tablets.remove(&tablet) {
            Some(rate) => {
                for (server, delta) in [(from, -rate), (to, rate)] {
                    if let Some(Some(total)) = self.servers.get_mut(server) {
                        *total = (*total + delta).max(0.0);
                    }
                }
            }
            None => {
                for server in [from, to] {
                    self.servers.insert(server.to_owned(), None);
                }
            }
        }
    }

    /// The trade that lowers the busiest server's rate the most: one of its
    /// tablets for a less busy tablet of another server, both rates known, when
    /// it lowers the busier of the two afterwards below the busiest's rate now by
    /// at least [`MIN_GAIN`] of it, and leaves no two tables crowded against each
    /// other on the pair (which [`Spread::best_swap`] would trade back).
    pub(crate) fn best_swap(&self, movable: &Movable, spread: &mut Spread) -> Option<Swap> {
        let (busiest, busy_rate) = self
            .servers
            .iter()
            .filter_map(|(s, r)| r.map(|r| (s, r)))
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        if busy_rate < MIN_BUSY_RATE {
            return None;
        }
        let hot = self.rated(movable.get(busiest)?);
        let mut candidates: Vec<(f64, &String, usize, usize)> = Vec::new();
        for (other, rate) in &self.servers {
            let (Some(other_rate), Some(list)) = (*rate, movable.get(other)) else {
                continue;
            };
            if other == busiest {
                continue;
            }
            let mut cold = self.rated(list);
            cold.sort_by(|a, b| a.1.total_cmp(&b.1));
            for &(from_a, h) in &hot {
                // The cold tablet that evens the pair out exactly: as near it as
                // the list allows, on either side.
                let ideal = h - (busy_rate - other_rate) / 2.0;
                let at = cold.partition_point(|&(_, c)| c < ideal);
                for &(from_b, c) in cold.iter().skip(at.saturating_sub(2)).take(4) {
                    if c >= h {
                        continue;
                    }
                    let after = (busy_rate - h + c).max(other_rate + h - c);
                    let gain = busy_rate - after;
                    if gain >= MIN_GAIN * busy_rate {
                        candidates.push((gain, other, from_a, from_b));
                    }
                }
            }
        }
        candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
        let busy_list = movable.get(busiest)?;
        for (_, other, from_a, from_b) in candidates {
            let (Some((out_of_a, _)), Some((out_of_b, _))) = (
                busy_list.get(from_a),
                movable.get(other).and_then(|l| l.get(from_b)),
            ) else {
                continue;
            };
            if out_of_a.name != out_of_b.name
                && spread.trade_crowds(&out_of_a.name, &out_of_b.name, busiest, other)
            {
                continue;
            }
            return Some(Swap {
                a: busiest.clone(),
                b: other.clone(),
                from_a,
                from_b,
            });
        }
        None
    }

    /// The tablet to split for load when no trade helps: the busiest of the
    /// busiest server's tablets at or above `rule`'s rate and size such that one
    /// half moved to the quietest server would lower the busiest server's rate by
    /// at least [`MIN_GAIN`] of it (a tablet carrying most of its server's load
    /// cannot be traded without its load going along). Every server's rate must
    /// be known. A tablet whose sampled requests mostly fall on one row, or one
    /// split for load whose load stayed in one half, is not split for load.
    /// `facts`: tablet id -> what its server reported of it.
    pub(crate) fn hot_split(
        &self,
        movable: &Movable,
        facts: &HashMap<u64, SplitFacts>,
        rule: HotSplitRule,
        rates: &RequestRates,
    ) -> Option<HotTablet> {
        if rule.min_rate <= 0.0 || self.servers.len() < 2 {
            return None;
        }
        let known: Vec<(&String, f64)> = self
            .servers
            .iter()
            .map(|(s, r)| r.map(|r| (s, r)))
            .collect::<Option<_>>()?;
        let (busiest, busy_rate) = known.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
        let quietest = known
            .iter()
            .filter(|(s, _)| s != busiest)
            .map(|(_, r)| *r)
            .min_by(|a, b| a.total_cmp(b))?;
        if *busy_rate < MIN_BUSY_RATE {
            return None;
        }
        let list = movable.get(*busiest)?;
        let mut hot = self.rated(list);
        hot.sort_by(|a, b| b.1.total_cmp(&a.1));
        for (index, rate) in hot {
            if rate < rule.min_rate {
                break;
            }
            let Some((table, loc)) = list.get(index) else {
                continue;
            };
            if table.split_rule() == SplitRule::Never {
                continue;
            }
            let tablet = loc.tablet_id;
            let Some(known) = facts.get(&tablet) else {
                continue;
            };
            if known.file_bytes < rule.min_bytes
                || known.load_split == LoadSplit::Concentrated
                || rates.concentrated(tablet, rate)
            {
                continue;
            }
            let after = (busy_rate - rate / 2.0).max(quietest + rate / 2.0);
            if busy_rate - after >= MIN_GAIN * busy_rate {
                return Some(HotTablet {
                    server: (*busiest).clone(),
                    tablet,
                    rate,
                    at: match &known.load_split {
                        LoadSplit::At(row) => Some(row.clone()),
                        LoadSplit::Unknown | LoadSplit::Concentrated => None,
                    },
                });
            }
        }
        None
    }

    /// The tablets of `list` with a known rate: (index in `list`, rate).
    fn rated(&self, list: &[(TableDescriptor, TabletLocation)]) -> Vec<(usize, f64)> {
        list.iter()
            .enumerate()
            .filter_map(|(i, (_, loc))| self.tablets.get(&loc.tablet_id).map(|r| (i, *r)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    /// Server name -> its movable tablets, each named by its table.
    fn placed(servers: &[(&str, &[&str])]) -> (Movable, Spread) {
        let mut movable = Movable::new();
        let mut spread = Spread::default();
        let mut id = 100;
        for (server, tables) in servers {
            for table in *tables {
                id += 1;
                let desc = TableDescriptor {
                    name: b(table),
                    families: Vec::new(),
                    enabled: true,
                    created_ms: 0,
                    durability: None,
                    attributes: Default::default(),
                };
                let loc = TabletLocation {
                    table: b(table),
                    start_row: b(""),
                    end_row: b(""),
                    tablet_id: id,
                    server: (*server).to_owned(),
                };
                spread.add(server, &desc.name);
                movable
                    .entry((*server).to_owned())
                    .or_default()
                    .push((desc, loc));
            }
        }
        (movable, spread)
    }

    #[test]
    fn count_moves_take_the_table_most_crowded_on_the_busy_server() {
        let (mut movable, spread) = placed(&[("a", &["x", "x", "x", "y"]), ("b", &["y"])]);
        let list = movable.get_mut("a").unwrap();
        let (table, _) = spread.take_most_crowded(list, "a", "b").unwrap();
        assert_eq!(table.name, b("x"), "x: 3 on a, 0 on b; y: 1 on each");
        assert_eq!(list.len(), 3);
    }

    #[test]
    fn even_counts_with_crowded_tables_trade_one_of_each() {
        let (movable, mut spread) = placed(&[("a", &["x", "x", "x"]), ("b", &["y", "y", "y"])]);
        let swap = spread
            .best_swap(&movable)
            .expect("x and y are each crowded");
        let (ta, tb) = (
            &movable[&swap.a][swap.from_a].0.name,
            &movable[&swap.b][swap.from_b].0.name,
        );
        assert_ne!(ta, tb);
        spread.moved(&ta.clone(), &swap.a.clone(), &swap.b.clone());
        spread.moved(&tb.clone(), &swap.b.clone(), &swap.a.clone());
        // 2 and 1 of each now: no trade is worth making.
        assert!(spread.best_swap(&movable).is_none());
        // Spread tables never trade.
        let (movable, spread) = placed(&[("a", &["x", "y"]), ("b", &["x", "y"])]);
        assert!(spread.best_swap(&movable).is_none());
    }

    fn s(name: &str) -> String {
        name.to_owned()
    }

    /// Loads of the tablets `placed` numbered (from 101, in order), and of their
    /// servers.
    fn loads(movable: &Movable, rates: &[f64]) -> Loads {
        let mut loads = Loads::default();
        for (server, list) in movable {
            let mut total = 0.0;
            for (_, loc) in list {
                let rate = rates[usize::try_from(loc.tablet_id - 101).unwrap()];
                loads.tablets.insert(loc.tablet_id, rate);
                total += rate;
            }
            loads.servers.insert(server.clone(), Some(total));
        }
        loads
    }

    #[test]
    fn rates_need_two_readings_on_the_same_server_far_enough_apart() {
        let mut rates = RequestRates::default();
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let first = rates.observe(&[(s("a"), vec![(1, 500), (2, 0)])], t0);
        assert_eq!(first.server("a"), None, "one reading is no rate");
        let second = rates.observe(&[(s("a"), vec![(1, 1500), (2, 40)])], at(2000));
        assert_eq!(second.tablets.get(&1), Some(&500.0));
        assert_eq!(second.tablets.get(&2), Some(&20.0));
        assert_eq!(second.server("a"), Some(520.0));
        // Too soon after: no rate, and the older reading stays for the next.
        let soon = rates.observe(&[(s("a"), vec![(1, 1600), (2, 40)])], at(2100));
        assert_eq!(soon.server("a"), None);
        let later = rates.observe(&[(s("a"), vec![(1, 2500), (2, 40)])], at(4000));
        assert_eq!(later.tablets.get(&1), Some(&500.0));
        // Read on another server, or lower than before (reopened): starts over.
        let moved = rates.observe(
            &[(s("b"), vec![(1, 2600)]), (s("a"), vec![(2, 3)])],
            at(5000),
        );
        assert!(moved.tablets.is_empty(), "{moved:?}");
        assert_eq!(moved.server("b"), None);
        let again = rates.observe(
            &[(s("b"), vec![(1, 2700)]), (s("a"), vec![(2, 13)])],
            at(6000),
        );
        assert_eq!(again.tablets.get(&1), Some(&100.0));
        assert_eq!(again.tablets.get(&2), Some(&10.0));
        // A tablet nobody reports is forgotten.
        rates.observe(&[(s("b"), vec![(1, 2800)])], at(7000));
        assert!(!rates.last.contains_key(&2));
    }

    #[test]
    fn a_tablet_opened_elsewhere_counts_from_its_opening() {
        let mut rates = RequestRates::default();
        let t0 = Instant::now();
        rates.observe(&[(s("a"), vec![(1, 900)])], t0);
        rates.opened(1, "b", t0 + Duration::from_secs(1));
        let after = rates.observe(&[(s("b"), vec![(1, 300)])], t0 + Duration::from_secs(4));
        assert_eq!(after.tablets.get(&1), Some(&100.0));
        assert_eq!(after.server("b"), Some(100.0));
    }

    #[test]
    fn two_hot_tablets_on_one_server_are_parted() {
        let (movable, mut spread) = placed(&[("a", &["x", "x"]), ("b", &["x", "x"])]);
        let mut loads = loads(&movable, &[100.0, 100.0, 1.0, 1.0]);
        let swap = loads
            .best_swap(&movable, &mut spread)
            .expect("a serves 200/s, b 2/s");
        assert_eq!((swap.a.as_str(), swap.b.as_str()), ("a", "b"));
        let (hot, cold) = (
            movable["a"][swap.from_a].1.tablet_id,
            movable["b"][swap.from_b].1.tablet_id,
        );
        assert!(hot == 101 || hot == 102);
        assert!(cold == 103 || cold == 104);
        loads.moved(hot, "a", "b");
        loads.moved(cold, "b", "a");
        assert_eq!(loads.server("a"), Some(101.0));
        assert_eq!(loads.server("b"), Some(101.0));
    }

    #[test]
    fn trades_that_do_not_lower_the_busiest_enough_are_not_made() {
        // One tablet carries nearly all the load: wherever it goes, that server
        // is as busy.
        let (movable, mut spread) = placed(&[("a", &["x", "x"]), ("b", &["x", "x"])]);
        let loads_now = loads(&movable, &[1000.0, 0.0, 10.0, 10.0]);
        assert!(loads_now.best_swap(&movable, &mut spread).is_none());
        // Nearly even.
        let loads_now = loads(&movable, &[100.0, 100.0, 95.0, 95.0]);
        assert!(loads_now.best_swap(&movable, &mut spread).is_none());
        // Uneven but idle.
        let loads_now = loads(&movable, &[9.0, 9.0, 0.0, 0.0]);
        assert!(loads_now.best_swap(&movable, &mut spread).is_none());
        // A tablet of b without a known rate (not reported, or just opened):
        // b's rate is unknown, so no trade with it on a guess.
        let mut loads_now = loads(&movable, &[100.0, 100.0, 1.0, 1.0]);
        loads_now.tablets.remove(&103);
        loads_now.require_reported(&movable);
        assert_eq!(loads_now.server("b"), None);
        assert!(loads_now.best_swap(&movable, &mut spread).is_none());
        // A tablet moving without a known rate leaves both servers unknown.
        let mut loads_now = loads(&movable, &[100.0, 100.0, 1.0, 1.0]);
        loads_now.tablets.remove(&101);
        loads_now.moved(101, "a", "b");
        assert_eq!((loads_now.server("a"), loads_now.server("b")), (None, None));
    }

    #[test]
    fn load_trades_keep_tables_spread() {
        // x and y have one tablet on each server; trading across tables would put
        // both x tablets on one server and both y tablets on the other.
        let (movable, mut spread) = placed(&[("a", &["x", "y"]), ("b", &["x", "y"])]);
        assert!(spread.trade_crowds(&b("x"), &b("y"), "a", "b"));
        assert!(!spread.trade_crowds(&b("x"), &b("x"), "a", "b"));
        assert_eq!(
            spread.on("a", &b("x")),
            1,
            "the check leaves counts as they were"
        );
        assert_eq!(spread.on("b", &b("x")), 1);
        // Every trade that lowers a by enough is across tables but one each way.
        let loads_now = loads(&movable, &[50.0, 10.0, 0.0, 0.0]);
        let swap = loads_now
            .best_swap(&movable, &mut spread)
            .expect("a same-table trade lowers a");
        assert_eq!(
            movable["a"][swap.from_a].0.name,
            movable["b"][swap.from_b].0.name
        );
    }

    const RULE: HotSplitRule = HotSplitRule {
        min_rate: 100.0,
        min_bytes: 1000,
    };

    /// Every tablet `placed` numbered (from 101) holding `bytes` of files, its
    /// load's split row unknown.
    fn sized(movable: &Movable, bytes: u64) -> HashMap<u64, SplitFacts> {
        movable
            .values()
            .flatten()
            .map(|(_, loc)| {
                let facts = SplitFacts {
                    file_bytes: bytes,
                    load_split: LoadSplit::Unknown,
                };
                (loc.tablet_id, facts)
            })
            .collect()
    }

    fn hot(server: &str, tablet: u64, rate: f64, at: Option<&'static str>) -> Option<HotTablet> {
        Some(HotTablet {
            server: s(server),
            tablet,
            rate,
            at: at.map(b),
        })
    }

    #[test]
    fn a_tablet_no_trade_can_help_is_split() {
        // 101 carries nearly all the load: no trade lowers a (see above), but
        // half of it on b would.
        let (movable, mut spread) = placed(&[("a", &["x", "x"]), ("b", &["x", "x"])]);
        let rates = RequestRates::default();
        let loads_now = loads(&movable, &[1000.0, 0.0, 10.0, 10.0]);
        assert!(loads_now.best_swap(&movable, &mut spread).is_none());
        let mut sizes = sized(&movable, 5000);
        assert_eq!(
            loads_now.hot_split(&movable, &sizes, RULE, &rates),
            hot("a", 101, 1000.0, None),
            "split at its data's middle: where its load lies is unknown"
        );
        // Split where the server's sample of requests says the load parts.
        if let Some(facts) = sizes.get_mut(&101) {
            facts.load_split = LoadSplit::At(b("m"));
        }
        assert_eq!(
            loads_now.hot_split(&movable, &sizes, RULE, &rates),
            hot("a", 101, 1000.0, Some("m"))
        );
        // Most requests on one row: no split parts them.
        if let Some(facts) = sizes.get_mut(&101) {
            facts.load_split = LoadSplit::Concentrated;
        }
        assert_eq!(loads_now.hot_split(&movable, &sizes, RULE, &rates), None);
        let sizes = sized(&movable, 5000);
        // Too small, too quiet, switched off, or the servers nearly even: no split.
        assert_eq!(
            loads_now.hot_split(&movable, &sized(&movable, 999), RULE, &rates),
            None
        );
        let quiet = loads(&movable, &[99.0, 0.0, 1.0, 1.0]);
        assert_eq!(quiet.hot_split(&movable, &sizes, RULE, &rates), None);
        let off = HotSplitRule {
            min_rate: 0.0,
            ..RULE
        };
        assert_eq!(loads_now.hot_split(&movable, &sizes, off, &rates), None);
        let even = loads(&movable, &[500.0, 0.0, 480.0, 0.0]);
        assert_eq!(even.hot_split(&movable, &sizes, RULE, &rates), None);
        // A server whose rate is unknown: no split on a guess.
        let mut unknown = loads(&movable, &[1000.0, 0.0, 10.0, 10.0]);
        unknown.tablets.remove(&103);
        unknown.require_reported(&movable);
        assert_eq!(unknown.hot_split(&movable, &sizes, RULE, &rates), None);
        // With one server there is nowhere for a half to go.
        let (alone, _) = placed(&[("a", &["x", "x"])]);
        let one = loads(&alone, &[1000.0, 0.0]);
        assert_eq!(
            one.hot_split(&alone, &sized(&alone, 5000), RULE, &rates),
            None
        );
    }

    #[test]
    fn a_half_that_kept_the_load_is_not_split_again() {
        let (movable, _) = placed(&[("a", &["x", "x"]), ("b", &["x", "x"])]);
        let sizes = sized(&movable, 5000);
        let mut rates = RequestRates::default();
        let t0 = Instant::now();
        // 101 and 102 are the halves of a tablet that served 1000/s.
        rates.split_for_load(100, 1000.0, [101, 102], "a", t0);
        let kept = loads(&movable, &[950.0, 10.0, 10.0, 10.0]);
        assert_eq!(kept.hot_split(&movable, &sizes, RULE, &rates), None);
        // A half with a fair part of the load may be split again.
        let parted = loads(&movable, &[600.0, 400.0, 0.0, 0.0]);
        assert_eq!(
            parted.hot_split(&movable, &sizes, RULE, &rates),
            hot("a", 101, 600.0, None)
        );
        // The halves count from their opening on the server.
        let read = rates.observe(
            &[(s("a"), vec![(101, 300), (102, 100)])],
            t0 + Duration::from_secs(1),
        );
        assert_eq!(read.tablets.get(&101), Some(&300.0));
        // Halves nobody reports any more are forgotten.
        rates.observe(&[(s("a"), vec![(103, 0)])], t0 + Duration::from_secs(2));
        assert!(rates.split_from.is_empty());
    }
}
