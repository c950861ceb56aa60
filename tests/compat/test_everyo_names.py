"""Every name of reference EveryO's public API (its top-level ``__all__`` without the plotting,
configuration, logging and backend modules it also has, and the modules of
shared/reference/everyo-api.md) exists in everyo."""

from __future__ import annotations

import importlib

import pytest

import everyo as eo

TOP_LEVEL = """
__version__ cuda datasets Device Tensor as_tensor device enable_grad is_tensor no_grad
set_grad_enabled tensor abs avg_pool2d conv2d max_pool2d add arange clip concatenate divide dot
exp eye flatten full linspace log log_softmax matmul max mean min multiply negative normal
one_hot ones ones_like power rand randn relu reshape sigmoid softmax sqrt stack subtract sum
tanh transpose uniform variance zeros zeros_like AvgPool2D BCELoss BCEWithLogitsLoss Conv2D
CrossEntropyLoss Dropout Flatten Linear LogSoftmax Loss MAELoss MSELoss MaxPool2D Module
Parameter ReLU Sequential Sigmoid Softmax Tanh Adam Optimizer SGD ArrayDataset DataLoader
Dataset MinMaxScaler StandardScaler Subset TransformDataset load_csv_dataset one_hot_encode
random_split standardize stratified_split train_test_split CSVLogger Callback EarlyStopping
History LearningRateScheduler ModelCheckpoint ProgressLogger Trainer accuracy confusion_matrix
inspect_archive load save Profiler profile record_function EveryOBackendError
EveryOConfigurationError EveryOCudaError EveryODTypeError EveryODeviceError EveryOError
EveryOGradientError EveryOSerializationError EveryOShapeError
""".split()

MODULES = {
    "everyo.datasets": "make_regression make_blobs make_moons make_spirals make_xor load_digits "
    "render_digit make_recall_task make_copy_task make_parity_task GLYPHS IMAGE_SHAPE NUM_CLASSES",
    "everyo.cuda": "is_available device_count unavailable_reason runtime_info reset_cache add "
    "multiply matmul relu sum_all to_device ResidentTensor EXTENSION_NAME KERNEL_NAMES",
    "everyo.profiler": "ProfileEvent Profiler profile record_function",
    "everyo.nn.losses": "Loss MAELoss MSELoss BCELoss BCEWithLogitsLoss CrossEntropyLoss mae_loss",
    "everyo.nn.channels_last": "Conv2D MaxPool2D AvgPool2D conv2d max_pool2d avg_pool2d",
    "everyo.training.callbacks": "Callback CallbackList EarlyStopping ModelCheckpoint "
    "LearningRateScheduler",
    "everyo.core.device": "Device device resolve_device",
}


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_top_level_name(name):
    assert hasattr(eo, name)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_names(module):
    mod = importlib.import_module(module)
    missing = [n for n in MODULES[module].split() if not hasattr(mod, n)]
    assert not missing


def test_everyo_spelled_layers_sit_beside_the_pytorch_ones():
    assert eo.Conv2D is not eo.Conv2d and eo.MaxPool2D is not eo.MaxPool2d
    assert eo.conv2d is eo.nn.functional.conv2d  # eo.conv2d stays NCHW


def test_compat_page_examples_run(monkeypatch, tmp_path, capsys):
    import re
    import textwrap
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "everyo-compat.md"
    blocks = re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.S | re.M)
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    for block in blocks:
        exec(compile(textwrap.dedent(block), str(page), "exec"), ns)
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["(10, 10) True", "(3, 3, 1, 8) (2, 14, 14, 8)", "(2, 8, 28, 28)"]
    assert (tmp_path / "history.csv").read_text().startswith("epoch,loss,accuracy")


def test_reference_names_keep_import_everyo_light():
    import subprocess
    import sys

    code = (
        "import sys, everyo as eo\n"
        "early = sorted(m for m in sys.modules if m.startswith(('everyo.profiler.profiler',"
        " 'everyo.datasets', 'everyo.bench', 'cupy', 'pandas', 'IPython')))\n"
        "assert eo.Profiler is eo.profiler.Profiler and callable(eo.record_function)\n"
        "print(early)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
