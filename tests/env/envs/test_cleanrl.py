"""``Connect4Flat-v0`` in a loop shaped like CleanRL's ``ppo.py``: env id with a module prefix, vector env of
``gym.make`` thunks with ``RecordEpisodeStatistics``, an MLP sized from ``single_observation_space.shape``, raw
observations into ``torch.Tensor``, rollouts, GAE and clipped PPO updates."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
from helpers.extras import importorskip

from connect4_env.envs.gym_env import make_flat_env

torch = importorskip("torch")


def make_env(env_id: str):
    def thunk():
        env = gym.make(env_id)
        return gym.wrappers.RecordEpisodeStatistics(env)

    return thunk


def test_flat_env_passes_gymnasiums_checker():
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(make_flat_env())
    env = gym.make("connect4_env:Connect4Flat-v0", rows=4, columns=5)
    observation, info = env.reset(seed=0)
    assert observation.shape == (40,) and observation.dtype == np.float32
    assert env.observation_space.contains(observation) and info["action_mask"].shape == (5,)


def test_a_cleanrl_shaped_ppo_loop_runs():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    num_envs, num_steps, updates = 4, 64, 3
    envs = gym.vector.SyncVectorEnv([make_env("connect4_env:Connect4Flat-v0") for _ in range(num_envs)])
    assert isinstance(envs.single_action_space, gym.spaces.Discrete)
    width = int(np.array(envs.single_observation_space.shape).prod())  # what fails on Connect4-v0's (6, 7, 2)
    actor = torch.nn.Sequential(
        torch.nn.Linear(width, 64), torch.nn.Tanh(), torch.nn.Linear(64, envs.single_action_space.n)
    )
    critic = torch.nn.Sequential(torch.nn.Linear(width, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=2.5e-4)

    obs = torch.zeros((num_steps, num_envs, width))
    actions = torch.zeros((num_steps, num_envs), dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros((num_steps, num_envs)) for _ in range(4))
    next_obs, _ = envs.reset(seed=1)
    next_obs, next_done = torch.Tensor(next_obs), torch.zeros(num_envs)
    returns_seen = []
    for _ in range(updates):
        for step in range(num_steps):
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                distribution = torch.distributions.Categorical(logits=actor(next_obs))
                action = distribution.sample()
                values[step] = critic(next_obs).flatten()
            actions[step], logprobs[step] = action, distribution.log_prob(action)
            next_obs, reward, terminations, truncations, infos = envs.step(action.numpy())
            rewards[step] = torch.tensor(reward, dtype=torch.float32)
            next_obs = torch.Tensor(next_obs)
            next_done = torch.Tensor(np.logical_or(terminations, truncations).astype(np.float32))
            if "episode" in infos:
                returns_seen.extend(infos["episode"]["r"][infos["_episode"]].tolist())
        with torch.no_grad():
            next_value = critic(next_obs).flatten()
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(num_envs)
            for t in reversed(range(num_steps)):
                not_done = 1.0 - (next_done if t == num_steps - 1 else dones[t + 1])
                following = next_value if t == num_steps - 1 else values[t + 1]
                delta = rewards[t] + 0.99 * following * not_done - values[t]
                last = delta + 0.99 * 0.95 * not_done * last
                advantages[t] = last
            targets = advantages + values
        distribution = torch.distributions.Categorical(logits=actor(obs.reshape(-1, width)))
        ratio = (distribution.log_prob(actions.reshape(-1)) - logprobs.reshape(-1)).exp()
        flat_advantages = advantages.reshape(-1)
        policy_loss = -torch.min(ratio * flat_advantages, ratio.clamp(0.8, 1.2) * flat_advantages).mean()
        value_loss = ((critic(obs.reshape(-1, width)).flatten() - targets.reshape(-1)) ** 2).mean()
        loss = policy_loss + 0.5 * value_loss - 0.01 * distribution.entropy().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        assert torch.isfinite(loss)
    envs.close()
    assert returns_seen, "RecordEpisodeStatistics reported no finished episode"
    assert set(returns_seen) <= {-1.0, 0.0, 1.0}
