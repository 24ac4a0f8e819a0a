"""Networks for the AlphaZero tests (torch is imported when one is made: the core install has none)."""

from __future__ import annotations

from typing import Any


def net_with_batch_norm_statistics(seed: int, channels: int = 8, blocks: int = 2) -> Any:
    """A ``PolicyValueNet`` in eval mode whose batch norms have scales, shifts and running statistics far from
    their defaults, so that folding them into the convolutions is exercised."""
    import torch

    from connect4_agents.alphazero import PolicyValueNet

    torch.manual_seed(seed)
    net = PolicyValueNet(channels=channels, blocks=blocks)
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-1.0, 1.0)
                module.running_var.uniform_(0.3, 3.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)
    return net.eval()
