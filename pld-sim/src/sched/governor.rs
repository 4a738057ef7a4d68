//! The parallel schedule's governor: window by window, whether one worker (`Solo`) or every
//! worker (`Team`) runs the ranks, decided from the work (steps and bytes moved, `parallel.rs`) each crew did per second of wall time.
//!
//! Guarantees: a pure function of the windows it is shown and of whether a core was free when
//! it asked (no clock, no threads, no program knowledge); the run starts `Solo` and first tries
//! the team after [`FIRST_PROBE_AFTER`] windows; a team probe starts only when a core is free
//! (on a machine whose cores are all busy, a second worker holding a rank while it waits for a
//! core stalls every rank that waits on that one), else it is looked at again after the next
//! window; `Team` is chosen only when the slower of its last two windows beats the fastest
//! of `Solo`'s recent windows by [`TEAM_MARGIN`] (a second worker costs a core a shared machine
//! could use, and one lucky window must not buy it), so a run whose ranks block too often to
//! overlap (a barrier per tile) or whose second worker gets no core falls back to one worker;
//! the crew not chosen is probed for up to [`PROBE_WINDOWS`] windows (one, when solo wins
//! it already) after a gap that starts at [`MIN_GAP`] windows
//! and doubles (up to [`MAX_GAP`]) each time a probe loses, so the time spent trying a crew that
//! does not pay shrinks geometrically, and a crew that starts to pay is found again within
//! [`MAX_GAP`] windows.

/// Which workers take ranks in a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crew {
    /// The first worker only (the others sleep).
    Solo,
    /// Every worker.
    Team,
}

impl Crew {
    fn other(self) -> Crew {
        match self {
            Crew::Solo => Crew::Team,
            Crew::Team => Crew::Solo,
        }
    }

    fn index(self) -> usize {
        match self {
            Crew::Solo => 0,
            Crew::Team => 1,
        }
    }
}

/// Wall time of one window: long next to a slice (microseconds) and to waking a sleeping
/// worker (hundreds of microseconds on a VM), short next to a run worth two threads.
pub const WINDOW: std::time::Duration = std::time::Duration::from_millis(4);

/// Wall time of the governed run's first window, which one thread runs as det runs: a run
/// shorter than it never starts a worker. Shorter than [`WINDOW`]: the team is tried as soon
/// as the run has outlasted what starting it costs many times over (~0.05 ms: a thread spawn,
/// the handles' fork and join), since every solo millisecond before a team that pays is lost.
pub const FIRST_WINDOW: std::time::Duration = std::time::Duration::from_millis(1);

/// `Team` must run this many times `Solo`'s steps per second to be chosen.
pub const TEAM_MARGIN: f64 = 1.1;

/// Solo windows before the team's first probe: a run shorter than this is one thread. One:
/// since protocol steps move up to 256 KiB (D-sim-37) a team pays on the builtin collectives,
/// and every solo window before the probe is time a team that pays did not get.
pub const FIRST_PROBE_AFTER: u32 = 1;

/// Windows the chosen crew runs before the other is probed again, after a probe that won.
pub const MIN_GAP: u32 = 8;

/// The longest gap between two probes (windows).
pub const MAX_GAP: u32 = 128;

/// Windows a probe lasts.
pub const PROBE_WINDOWS: u32 = 2;

/// Windows of a crew's latest stint its estimate looks at.
const RECENT: usize = 4;

/// The governor's state: the crew of the current window, the rates of each crew's latest
/// stint and when to probe next.
#[derive(Clone, Debug)]
pub struct Governor {
    crew: Crew,
    /// Steps per second of the last [`RECENT`] windows of each crew's latest stint (`Solo`,
    /// `Team`), oldest first.
    stint: [Vec<f64>; 2],
    /// Windows of the current probe of `crew` left (0: not probing).
    probing: u32,
    /// Windows of the chosen crew left before the next probe.
    stay: u32,
    /// The current gap between probes.
    gap: u32,
}

impl Default for Governor {
    fn default() -> Governor {
        Governor {
            crew: Crew::Solo,
            stint: [Vec::new(), Vec::new()],
            probing: 0,
            stay: FIRST_PROBE_AFTER,
            gap: MIN_GAP / 2,
        }
    }
}

impl Governor {
    /// The crew of the current window.
    #[cfg(test)]
    pub fn crew(&self) -> Crew {
        self.crew
    }

    /// The current window did `steps` units of work in `secs` seconds of wall time; returns the crew
    /// of the next window. `core_free` says whether a core is idle now; it is asked only when a
    /// team probe is due, which waits a window while it says no (see [`Governor`]).
    pub fn window_ended(&mut self, steps: u64, secs: f64, core_free: impl FnOnce() -> bool) -> Crew {
        let stint = &mut self.stint[self.crew.index()];
        if stint.len() == RECENT {
            stint.remove(0);
        }
        stint.push(steps as f64 / secs.max(1e-9));
        if self.probing > 0 {
            // More windows only lower the team's estimate and raise solo's: a probe that solo
            // already wins ends here (a losing team probe costs one window, not two).
            let better = self.better();
            self.probing -= 1;
            if self.probing > 0 && better == Crew::Team {
                return self.crew;
            }
            self.probing = 0;
            self.gap = if better == self.crew { MIN_GAP } else { (self.gap * 2).min(MAX_GAP) };
            self.switch(better);
            self.stay = self.gap;
        } else {
            self.stay = self.stay.saturating_sub(1);
            if self.stay == 0 && self.crew == Crew::Solo && !core_free() {
                // Every core is busy: a second worker would wait for one while holding a rank
                // that others wait for. Look again after the next window.
                self.stay = 1;
            } else if self.stay == 0 {
                self.probing = PROBE_WINDOWS;
                self.switch(self.crew.other());
            }
        }
        self.crew
    }

    /// Makes `crew` the current one; a crew that was not starts a new stint.
    fn switch(&mut self, crew: Crew) {
        if crew != self.crew {
            self.stint[crew.index()].clear();
            self.crew = crew;
        }
    }

    /// The crew that does more work per second, judged in `Solo`'s favour (a second worker
    /// costs a core, and a window is noisy on a shared machine): `Team` only when the slower
    /// of its last two windows beats the fastest of `Solo`'s recent ones by [`TEAM_MARGIN`].
    fn better(&self) -> Crew {
        let [solo, team] = &self.stint;
        let solo = solo.iter().copied().fold(f64::NAN, f64::max);
        let team = team.iter().rev().take(2).copied().fold(f64::NAN, f64::min);
        if team > solo * TEAM_MARGIN {
            Crew::Team
        } else {
            Crew::Solo
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows of 4 ms at these rates (steps per second) of the crew that runs each.
    fn window(g: &mut Governor, rate: f64) -> Crew {
        g.window_ended((rate * 0.004) as u64, 0.004, || true)
    }

    /// Runs `windows` windows whose rate is `rate(window, crew)`; returns each window's crew.
    fn drive(windows: usize, rate: impl Fn(usize, Crew) -> f64) -> Vec<Crew> {
        let mut g = Governor::default();
        let mut crews = Vec::new();
        for w in 0..windows {
            crews.push(g.crew());
            let r = rate(w, g.crew());
            window(&mut g, r);
        }
        crews
    }

    fn team_windows(crews: &[Crew]) -> usize {
        crews.iter().filter(|&&c| c == Crew::Team).count()
    }

    #[test]
    fn a_team_slower_than_one_worker_is_only_probed_ever_more_rarely() {
        // The mesh's barrier per tile: two workers run fewer steps per second than one.
        let crews = drive(300, |_, c| if c == Crew::Team { 60e6 } else { 100e6 });
        let first = FIRST_PROBE_AFTER as usize;
        assert!(crews[..first].iter().all(|&c| c == Crew::Solo), "{crews:?}");
        assert_eq!(
            &crews[first..first + 2],
            &[Crew::Team, Crew::Solo],
            "a probe that loses ends after one window"
        );
        // Probes of one window at the first probe, then after gaps of 8, 16, 32, 64, 128 windows.
        assert_eq!(team_windows(&crews), 6, "{crews:?}");
    }

    #[test]
    fn a_team_that_pays_keeps_the_cores() {
        let crews = drive(300, |_, c| if c == Crew::Team { 180e6 } else { 100e6 });
        let first = FIRST_PROBE_AFTER as usize;
        assert_eq!(&crews[first - 1..first + 2], &[Crew::Solo, Crew::Team, Crew::Team]);
        // Solo probes of two windows after gaps of 8, 16, 32, 64, 128 windows.
        assert_eq!(team_windows(&crews), 300 - first - 2 * 5, "solo is probed ever more rarely: {crews:?}");
    }

    #[test]
    fn a_team_barely_faster_than_one_worker_does_not_take_a_second_core() {
        let crews = drive(300, |_, c| if c == Crew::Team { 105e6 } else { 100e6 });
        assert_eq!(team_windows(&crews), 6, "{crews:?}");
    }

    #[test]
    fn one_lucky_window_does_not_buy_the_team() {
        // A loaded machine: every window varies by 2x whoever runs it, and the team, at 60% of
        // solo's rate on average, gets the quietest first window of every probe.
        let mut g = Governor::default();
        let mut crews = Vec::new();
        let mut first = true;
        for w in 0..300 {
            let (crew, quiet) = (g.crew(), w % 3 == 0);
            crews.push(crew);
            let rate = match crew {
                Crew::Team if first => 120e6,
                Crew::Team => 60e6,
                Crew::Solo if quiet => 100e6,
                Crew::Solo => 50e6,
            };
            first = crew == Crew::Solo;
            window(&mut g, rate);
        }
        assert_eq!(team_windows(&crews), 2 * 6, "only the probes: {crews:?}");
    }

    #[test]
    fn the_team_comes_back_when_it_starts_to_pay() {
        // A phase where ranks block per tile, then one where they run long stretches alone.
        let crews = drive(600, |w, c| match (c, w >= 200) {
            (Crew::Team, true) => 190e6,
            (Crew::Team, false) => 60e6,
            (Crew::Solo, _) => 100e6,
        });
        assert!(team_windows(&crews[..200]) <= 2 * 5, "{:?}", &crews[..200]);
        let back = crews[200..].iter().position(|&c| c == Crew::Team).expect("the team comes back");
        assert!(back <= MAX_GAP as usize, "found again within the longest gap: {back}");
        assert!(crews[200 + back..].iter().filter(|&&c| c == Crew::Solo).count() <= 2 * 5, "{crews:?}");
    }

    #[test]
    fn a_team_that_stops_paying_is_left() {
        let crews = drive(400, |w, c| match (c, w >= 100) {
            (Crew::Team, false) => 190e6,
            (Crew::Team, true) => 60e6,
            (Crew::Solo, _) => 100e6,
        });
        assert!(team_windows(&crews[..100]) >= 90, "{:?}", &crews[..100]);
        let left = crews[100..].iter().position(|&c| c == Crew::Solo).expect("solo comes back");
        assert!(left <= MAX_GAP as usize, "{left}");
        assert!(team_windows(&crews[100 + left..]) <= 2 * 5, "{crews:?}");
    }

    #[test]
    fn a_team_probe_waits_for_a_free_core() {
        // Every core busy for the first 20 windows, then one free: a team that would pay is
        // not tried while no core is free, and is tried at the first window one is.
        let mut g = Governor::default();
        let mut crews = Vec::new();
        for w in 0..40 {
            crews.push(g.crew());
            let rate = if g.crew() == Crew::Team { 180e6 } else { 100e6 };
            g.window_ended((rate * 0.004) as u64, 0.004, || w >= 20);
        }
        assert_eq!(team_windows(&crews[..21]), 0, "{crews:?}");
        assert_eq!(crews[21], Crew::Team, "tried as soon as a core is free: {crews:?}");
        // Then kept, but for solo's own probe after the gap.
        assert_eq!(team_windows(&crews[21..]), 19 - 2, "{crews:?}");
    }

    #[test]
    fn a_run_shorter_than_the_first_probe_is_one_worker() {
        let crews = drive(FIRST_PROBE_AFTER as usize, |_, c| if c == Crew::Team { 500e6 } else { 1e6 });
        assert_eq!(team_windows(&crews), 0);
    }
}
