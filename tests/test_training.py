"""The training core (lsplits.lm.training): the schedule, the weight-decay groups, bf16 autocast over fp32
master weights, and a checkpoint that resumes to exactly the weights of an uninterrupted run."""

from __future__ import annotations

import pytest
import torch

from lsplits.errors import ConfigError, DataError
from lsplits.lm.training import TrainConfig, Training


class _Tiny(torch.nn.Module):
    """A linear layer, a norm and dropout: enough to see decay groups, autocast and the RNG state."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.drop = torch.nn.Dropout(0.3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.drop(self.proj(x)))


def _loss(x: torch.Tensor, seen: list | None = None):
    def loss_of(model: torch.nn.Module) -> torch.Tensor:
        out = model(x)
        if seen is not None:
            seen.append(model.proj(x).dtype)  # one process on the CPU: accelerate leaves the module unwrapped
        return (out ** 2).sum()
    return loss_of


def _data(n: int = 6) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    return [torch.randn(4, 8, generator=generator) for _ in range(n)]


def _fresh(settings: TrainConfig, dtype: str = "fp32") -> Training:
    torch.manual_seed(0)
    return Training(_Tiny(), settings, dtype=dtype)


def test_warm_up_then_constant_or_linear_decay():
    constant = TrainConfig(lr=1.0, max_steps=10, warmup_steps=3)
    assert [constant.lr_factor(s) for s in range(5)] == [0.25, 0.5, 0.75, 1.0, 1.0]
    linear = TrainConfig(lr=1.0, max_steps=10, warmup_steps=2, schedule="linear")
    assert [round(linear.lr_factor(s), 4) for s in (0, 1, 2, 6, 9, 10)] == [0.3333, 0.6667, 1.0, 0.5, 0.125, 0.0]
    with pytest.raises(ConfigError, match="schedule must be one of constant, linear, got 'cosine'"):
        TrainConfig(lr=1.0, max_steps=10, schedule="cosine")
    with pytest.raises(ConfigError, match="max_steps must be a whole number >= 1 .*, got 0"):
        TrainConfig(lr=1.0, max_steps=0)
    with pytest.raises(ConfigError, match=r"^dtype must be one of auto, fp32, bf16 \(the compute dtype\), got 'half'$"):
        Training(_Tiny(), TrainConfig(lr=1.0, max_steps=1), dtype="half")


def test_the_schedule_is_applied_once_per_optimizer_step_with_accumulation():
    training = _fresh(TrainConfig(lr=0.1, max_steps=4, warmup_steps=3, grad_accum_steps=2), "fp32")
    taken = [training.step(_loss(x)) for x in _data(4)]
    assert taken == [False, True, False, True] and training.steps_done == 2
    assert training.optimizer.param_groups[0]["lr"] == pytest.approx(0.1 * 3 / 4)  # after 2 steps: (2+1)/(3+1)


def test_biases_and_norms_are_spared_weight_decay_unless_decay_all():
    spared = _fresh(TrainConfig(lr=0.1, max_steps=1, weight_decay=0.5, decay_all=False))
    groups = [(group["weight_decay"], len(group["params"])) for group in spared.optimizer.param_groups]
    assert groups == [(0.5, 1), (0.0, 3)]  # proj.weight decays; proj.bias, norm.weight, norm.bias do not
    everything = _fresh(TrainConfig(lr=0.1, max_steps=1, weight_decay=0.5))
    assert [(g["weight_decay"], len(g["params"])) for g in everything.optimizer.param_groups] == [(0.5, 4)]


def test_bf16_autocasts_the_forward_while_weights_and_optimizer_state_stay_fp32():
    seen: list = []
    training = _fresh(TrainConfig(lr=0.1, max_steps=2), "bf16")
    before = training.unwrapped.proj.weight.detach().clone()
    for x in _data(2):
        training.step(_loss(x, seen))
    assert training.precision == "bf16" and seen == [torch.bfloat16, torch.bfloat16]
    weight = training.unwrapped.proj.weight
    assert weight.dtype == torch.float32 and not torch.equal(weight, before)  # fp32 master weights, updated
    state = training.optimizer.state_dict()["state"]
    assert all(value.dtype == torch.float32 for entry in state.values() for key, value in entry.items()
               if key in ("exp_avg", "exp_avg_sq"))
    assert _fresh(TrainConfig(lr=0.1, max_steps=1), "fp32").precision == "fp32"


def test_a_checkpoint_resumes_to_the_weights_of_an_uninterrupted_run(tmp_path):
    settings = TrainConfig(lr=0.05, max_steps=6, warmup_steps=2, schedule="linear")
    data = _data(6)
    whole = _fresh(settings)
    for x in data:
        whole.step(_loss(x))
    first = _fresh(settings)
    for x in data[:3]:
        first.step(_loss(x))
    first.write_checkpoint(tmp_path)
    resumed = _fresh(settings)  # as a new process starts: initial weights, fresh RNG and optimizer until resumed
    resumed.resume(tmp_path)
    assert resumed.steps_done == 3
    for x in data[3:]:
        resumed.step(_loss(x))
    for name, value in whole.unwrapped.state_dict().items():  # dropout masks, Adam moments and LR all continued
        assert torch.equal(value, resumed.unwrapped.state_dict()[name]), name


class _Payload:
    """Unpickling this object opens (creates) a file: what a poisoned checkpoint could run."""

    def __init__(self, marker) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("name", ["rng.pt", "model.pt", "optimizer.pt", "scheduler.pt"])
def test_a_poisoned_checkpoint_file_is_refused_in_one_line_without_running_its_payload(tmp_path, name):
    settings = TrainConfig(lr=0.05, max_steps=2)
    first = _fresh(settings)
    first.step(_loss(_data(1)[0]))
    first.write_checkpoint(tmp_path)
    marker = tmp_path / "payload-ran"
    torch.save({"rng": _Payload(marker), "steps_done": 1}, tmp_path / name)
    with pytest.raises(DataError, match=rf"^{tmp_path / name}: refused to load: .*tensors.*Delete") as caught:
        _fresh(settings).resume(tmp_path)
    assert "\n" not in str(caught.value)
    assert not marker.exists()
