"""everyo.nn: ``Module``, layers, containers and losses, shaped like ``torch.nn``.

``from everyo.nn import functional as F`` gives the functional ops.
"""

from everyo.nn import functional, init
from everyo.nn.activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from everyo.nn.attention import MultiheadAttention, TransformerEncoderLayer
from everyo.nn.channels_last import AvgPool2D, Conv2D, MaxPool2D
from everyo.nn.containers import ModuleDict, ModuleList, Sequential
from everyo.nn.conv import AvgPool2d, Conv2d, MaxPool2d
from everyo.nn.dropout import Dropout
from everyo.nn.embedding import Embedding
from everyo.nn.linear import Flatten, Identity, Linear
from everyo.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    L1Loss,
    Loss,
    MAELoss,
    MSELoss,
    NLLLoss,
)
from everyo.nn.module import Module
from everyo.nn.norm import BatchNorm1d, BatchNorm2d, LayerNorm
from everyo.nn.parameter import Parameter

__all__ = [
    "Module", "Parameter", "Sequential", "ModuleList", "ModuleDict",
    "Linear", "Identity", "Flatten", "Conv2d", "MaxPool2d", "AvgPool2d",
    "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Dropout", "Embedding",
    "MultiheadAttention", "TransformerEncoderLayer",
    "ReLU", "GELU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
    "Conv2D", "MaxPool2D", "AvgPool2D", "Loss", "MAELoss",
    "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "NLLLoss",
]  # fmt: skip

_ = (functional, init)  # submodules: everyo.nn.functional, everyo.nn.init
