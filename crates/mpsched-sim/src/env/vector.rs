//! Many envs stepped together, split over threads by contiguous chunks.

use super::any::{AnyEnv, AnySpec};
use crate::rng::stream_seed;
use crate::scenario::ScenarioError;

/// Scenario seed of episode `episode` of sub-env seeded `seed`: the first episode uses `seed`
/// itself; later ones (autoreset) are derived, so a vector env's trajectories depend only on
/// its base seed.
pub fn episode_seed(seed: u64, episode: u64) -> u64 {
    if episode == 0 {
        seed
    } else {
        stream_seed(seed, &format!("episode/{episode}"))
    }
}

/// N environments stepped together (docs/envs.md, "Vector env"): sub-env i is seeded
/// `base + i`; autoreset follows gymnasium's NEXT_STEP mode (the step after an episode ended
/// resets that sub-env and ignores its action). Work is split over a fixed number of threads
/// by contiguous chunks, so the thread count never changes results.
pub struct VecEnv {
    /// The sub-envs.
    pub envs: Vec<AnyEnv>,
    seeds: Vec<u64>,
    episodes: Vec<u64>,
    needs_reset: Vec<bool>,
    /// Worker threads of a step.
    pub threads: usize,
}

/// Output buffers of a vector step (rows per sub-env).
pub struct VecOut<'a> {
    /// Observations, `[n, obs_len]`.
    pub obs: &'a mut [f32],
    /// Reward terms, `[n, terms_len]`.
    pub terms: &'a mut [f64],
    /// Per sub-env: the controlled flow completed.
    pub terminated: &'a mut [bool],
    /// Per sub-env: the scenario's duration was reached first.
    pub truncated: &'a mut [bool],
}

impl VecEnv {
    /// `n` envs of `spec`, sub-env i seeded `base_seed + i`, stepped over `threads` threads.
    pub fn new(spec: AnySpec, n: usize, base_seed: u64, threads: usize) -> Result<VecEnv, ScenarioError> {
        let mut envs = Vec::with_capacity(n);
        for i in 0..n {
            envs.push(AnyEnv::new(spec.clone(), base_seed.wrapping_add(i as u64))?);
        }
        let seeds = (0..n).map(|i| base_seed.wrapping_add(i as u64)).collect();
        Ok(VecEnv { envs, seeds, episodes: vec![0; n], needs_reset: vec![false; n], threads: threads.max(1) })
    }

    /// Number of sub-envs.
    pub fn len(&self) -> usize {
        self.envs.len()
    }

    /// Whether there are no sub-envs.
    pub fn is_empty(&self) -> bool {
        self.envs.is_empty()
    }

    /// Resets every sub-env; `base_seed` restarts the seeding (`None`: next episodes).
    pub fn reset(&mut self, base_seed: Option<u64>, obs: &mut [f32]) -> Result<(), ScenarioError> {
        let d = self.envs[0].dims().0;
        for i in 0..self.envs.len() {
            if let Some(b) = base_seed {
                self.seeds[i] = b.wrapping_add(i as u64);
                self.episodes[i] = 0;
            } else {
                self.episodes[i] += 1;
            }
            self.start_episode(i, obs, d)?;
        }
        Ok(())
    }

    /// Starts sub-env `i`'s current episode and writes its row of `obs` (`d` floats a row).
    fn start_episode(&mut self, i: usize, obs: &mut [f32], d: usize) -> Result<(), ScenarioError> {
        self.envs[i].reset(episode_seed(self.seeds[i], self.episodes[i]))?;
        self.needs_reset[i] = false;
        self.envs[i].observe(&mut obs[i * d..(i + 1) * d]);
        Ok(())
    }

    /// Starts the next episode of every sub-env whose episode ended in the last step and writes
    /// its row of `obs` (the other rows are left alone): SAME_STEP autoreset, as
    /// stable-baselines3 expects, instead of the NEXT_STEP autoreset `step` does by itself.
    pub fn reset_ended(&mut self, obs: &mut [f32]) -> Result<(), ScenarioError> {
        let d = self.envs[0].dims().0;
        for i in 0..self.envs.len() {
            if !self.needs_reset[i] {
                continue;
            }
            self.episodes[i] += 1;
            self.start_episode(i, obs, d)?;
        }
        Ok(())
    }

    /// Steps every sub-env with its row of `actions`. A sub-env whose episode ended starts the
    /// next one instead (NEXT_STEP autoreset); if re-drawing its scenario fails (a random range
    /// giving an invalid value), the error is returned, after every other sub-env has stepped.
    pub fn step(&mut self, actions: &[f32], out: VecOut<'_>) -> Result<(), ScenarioError> {
        let n = self.envs.len();
        if n == 0 {
            return Ok(());
        }
        let dims = self.envs[0].dims();
        let mut rest = Chunk {
            envs: &mut self.envs,
            seeds: &self.seeds,
            episodes: &mut self.episodes,
            resets: &mut self.needs_reset,
            actions,
            out,
        };
        if self.threads == 1 || n == 1 {
            return rest.step(dims);
        }
        let size = n.div_ceil(self.threads);
        std::thread::scope(|scope| {
            let mut handles = Vec::new();
            while !rest.envs.is_empty() {
                let m = size.min(rest.envs.len());
                let (mut chunk, tail) = rest.split(m, dims);
                handles.push(scope.spawn(move || chunk.step(dims)));
                rest = tail;
            }
            handles.into_iter().map(|h| h.join().expect("env worker panicked")).fold(Ok(()), Result::and)
        })
    }
}

/// Contiguous sub-envs with their rows of the step's inputs and outputs (one worker's share).
struct Chunk<'a> {
    envs: &'a mut [AnyEnv],
    seeds: &'a [u64],
    episodes: &'a mut [u64],
    resets: &'a mut [bool],
    actions: &'a [f32],
    out: VecOut<'a>,
}

impl<'a> Chunk<'a> {
    /// The first `m` sub-envs and the rest; `dims` = (obs, action, terms) lengths.
    fn split(self, m: usize, (d, a, t): (usize, usize, usize)) -> (Chunk<'a>, Chunk<'a>) {
        let (e0, e1) = self.envs.split_at_mut(m);
        let (s0, s1) = self.seeds.split_at(m);
        let (p0, p1) = self.episodes.split_at_mut(m);
        let (r0, r1) = self.resets.split_at_mut(m);
        let (a0, a1) = self.actions.split_at(m * a);
        let (o0, o1) = self.out.obs.split_at_mut(m * d);
        let (t0, t1) = self.out.terms.split_at_mut(m * t);
        let (x0, x1) = self.out.terminated.split_at_mut(m);
        let (y0, y1) = self.out.truncated.split_at_mut(m);
        let head = VecOut { obs: o0, terms: t0, terminated: x0, truncated: y0 };
        let tail = VecOut { obs: o1, terms: t1, terminated: x1, truncated: y1 };
        (
            Chunk { envs: e0, seeds: s0, episodes: p0, resets: r0, actions: a0, out: head },
            Chunk { envs: e1, seeds: s1, episodes: p1, resets: r1, actions: a1, out: tail },
        )
    }

    /// Steps (or autoresets) each sub-env and writes its rows; the first reset error, if any,
    /// after every sub-env has been handled.
    fn step(&mut self, (d, a, t): (usize, usize, usize)) -> Result<(), ScenarioError> {
        let mut failed = Ok(());
        for k in 0..self.envs.len() {
            let env = &mut self.envs[k];
            let out = &mut self.out;
            if self.resets[k] {
                self.episodes[k] += 1;
                if let Err(e) = env.reset(episode_seed(self.seeds[k], self.episodes[k])) {
                    failed = failed.and(Err(e));
                    continue;
                }
                self.resets[k] = false;
                out.terms[k * t..(k + 1) * t].iter_mut().for_each(|x| *x = 0.0);
                out.terminated[k] = false;
                out.truncated[k] = false;
            } else {
                let st = env.step(&self.actions[k * a..(k + 1) * a]);
                env.write_terms(&mut out.terms[k * t..(k + 1) * t]);
                out.terminated[k] = st.terminated;
                out.truncated[k] = st.truncated;
                self.resets[k] = st.terminated || st.truncated;
            }
            env.observe(&mut out.obs[k * d..(k + 1) * d]);
        }
        failed
    }
}
