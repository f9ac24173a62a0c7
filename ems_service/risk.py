"""Risk models per namespace: the stored one (or the default weights), calibration on stored episodes, refits."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable

from coach import Neighbour, PartialRun, RiskModel, fit, log_loss, run_features
from condenser import is_verified
from ems_service.config import CoachSettings
from ems_service.errors import CannotFit, NotReady
from ems_service.repositories import EpisodeRepository, RiskModelRepository, StoredEpisode
from ems_service.retrieval import RetrievalService, SearchHit

logger = logging.getLogger(__name__)

PREFIX_STEPS = (3, 5, 10)


def to_neighbour(hit: SearchHit) -> Neighbour:
    """A search hit as the coach's evidence."""
    e = hit.episode
    return Neighbour(
        id=e.id, similarity=hit.similarity, success=e.success, domain=e.domain, task=e.task, summary=e.summary,
        trust=e.trust, n_steps=e.n_steps, error_patterns=list(e.error_patterns or []),
        failure_categories=list(e.failure_categories or []), steps_brief=list(e.steps_brief or []),
        agent=e.agent, verified=is_verified(e.label_source, bool(e.verified)),
    )


def _fit(samples: list[tuple[dict, int, int]], *, healthy_budget: float) -> RiskModel:
    """coach.fit on (features, failed, id) samples; its ValueError (too few samples of an outcome) as CannotFit."""
    try:
        return fit([f for f, _, _ in samples], [y for _, y, _ in samples], healthy_budget=healthy_budget)
    except ValueError as exc:
        raise CannotFit(str(exc)) from exc


class RiskModels:
    """The failure-risk model of each namespace: loaded once, fitted on demand or after `refit_every` new episodes."""

    def __init__(self, *, settings: CoachSettings, models: RiskModelRepository, episodes: EpisodeRepository,
                 retrieval: RetrievalService) -> None:
        self.settings = settings
        self.models = models
        self.episodes = episodes
        self.retrieval = retrieval
        self._models: dict[str, RiskModel] = {}
        self._new_since_fit: dict[str, int] = {}
        self._fit_lock = threading.Lock()
        self._stopping = threading.Event()
        self._refit_thread: threading.Thread | None = None

    def close(self) -> None:
        """Stop a background refit (it aborts between episodes) and wait for it."""
        self._stopping.set()
        if self._refit_thread is not None:
            self._refit_thread.join(timeout=30)

    def model(self, namespace: str) -> RiskModel:
        """The fitted model of the namespace when one is stored, else the default weights."""
        model = self._models.get(namespace)
        if model is None:
            stored = self.models.get(namespace)
            model = RiskModel.from_dict(stored.model) if stored else RiskModel()
            self._models[namespace] = model
        return model

    def fitted_info(self, namespace: str) -> dict | None:
        stored = self.models.get(namespace)
        return None if stored is None else {"metrics": stored.metrics, "n_episodes": stored.n_episodes,
                                            "fitted_at": stored.fitted_at.isoformat()}

    def count_new(self, namespace: str, inserted: int) -> None:
        """Count new episodes; past EMS_COACH__REFIT_EVERY a refit starts in the background."""
        every = self.settings.refit_every
        if every <= 0:
            return
        self._new_since_fit[namespace] = self._new_since_fit.get(namespace, 0) + inserted
        if self._new_since_fit[namespace] >= every and not self._fit_lock.locked():
            self._new_since_fit[namespace] = 0
            self._refit_thread = threading.Thread(target=self._refit_quietly, args=(namespace,), name="ems-refit",
                                                  daemon=True)
            self._refit_thread.start()

    def _refit_quietly(self, namespace: str) -> None:
        try:
            self.calibrate(namespace=namespace)
        except (CannotFit, NotReady) as exc:
            logger.info("risk model refit for %s skipped: %s", namespace, exc.detail)
        except Exception:  # a background refit must never take the service down
            logger.exception("risk model refit for %s failed", namespace)

    def training_samples(self, *, namespace: str, max_episodes: int = 1500,
                         progress: Callable[[int, int], None] | None = None) -> list[tuple[dict, int, int]]:
        """(features, failed, episode id) for prefixes after 3, 5 and 10 steps of labelled episodes.

        Neighbours exclude the episode itself and every run of the same task (no leakage).
        """
        ids = self.episodes.labelled_ids(namespace)
        ids = sorted(ids, key=lambda i: hashlib.sha256(str(i).encode()).hexdigest())[:max_episodes]
        samples: list[tuple[dict, int, int]] = []
        k = self.settings.k
        min_sim = self.settings.min_similarity
        chunk = 64
        for start in range(0, len(ids), chunk):
            if self._stopping.is_set():
                raise NotReady("the service is stopping")
            part = ids[start : start + chunk]
            found = self.episodes.summaries(namespace, part)
            trajectories = self.episodes.trajectories(namespace, part)
            runs: list[tuple[PartialRun, StoredEpisode]] = []
            for episode_id in part:
                episode, trajectory = found.get(episode_id), trajectories.get(episode_id)
                if episode is None or trajectory is None:
                    continue
                for t in PREFIX_STEPS:
                    if len(trajectory.steps) > t:
                        runs.append((PartialRun(task=trajectory.task, steps=trajectory.steps[:t],
                                                domain=trajectory.domain, start_url=trajectory.start_url,
                                                agent=trajectory.agent), episode))
            vectors = self.retrieval.embed_queries([self.retrieval.query_text(trajectory=run) for run, _ in runs])
            for (run, episode), vector in zip(runs, vectors, strict=True):
                hits = self.retrieval.search_vector(namespace=namespace, vector=vector, k=k + 10, touch=False,
                                                    prefer_domain=run.domain, prefer_task=run.task)
                nbs = [to_neighbour(h) for h in hits if h.episode.id != episode.id and h.episode.task != episode.task][:k]
                samples.append((run_features(run, nbs, min_similarity=min_sim), int(episode.success is False),
                                episode.id))
            if progress:
                progress(min(start + chunk, len(ids)), len(ids))
        return samples

    def calibrate(self, *, namespace: str, max_episodes: int = 1500,
                  progress: Callable[[int, int], None] | None = None) -> dict:
        """Fit the risk model on stored episodes, compare it with the defaults on held-out episodes, persist it."""
        with self._fit_lock:
            samples = self.training_samples(namespace=namespace, max_episodes=max_episodes, progress=progress)
            held = [s for s in samples if int(hashlib.sha256(str(s[2]).encode()).hexdigest(), 16) % 5 == 0]
            train = [s for s in samples if s not in held]
            if len({y for _, y, _ in train}) < 2 or len({y for _, y, _ in held}) < 2:
                raise CannotFit("need failed and successful episodes in both the training and held-out sets")
            budget = self.settings.healthy_budget
            fitted = _fit(train, healthy_budget=budget)
            default = RiskModel()
            y_held = [y for _, y, _ in held]
            metrics = {
                "train_samples": len(train), "held_out_samples": len(held),
                "log_loss_fitted": round(log_loss([fitted.score(f)[0] for f, _, _ in held], y_held), 4),
                "log_loss_default": round(log_loss([default.score(f)[0] for f, _, _ in held], y_held), 4),
                "failure_rate": round(sum(y for _, y, _ in samples) / len(samples), 4),
            }
            fitted = _fit(samples, healthy_budget=budget)  # final
            self.models.save(namespace, model=fitted.to_dict(), metrics=metrics,
                             n_episodes=len({i for _, _, i in samples}))
            self._models[namespace] = fitted
        logger.info("risk model fitted for %s: %d samples, held-out log-loss %.4f (default %.4f)", namespace,
                    len(samples), metrics["log_loss_fitted"], metrics["log_loss_default"])
        return metrics
