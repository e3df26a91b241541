"""Kiln's graph IR: typed values, nodes, graphs, a builder, a printer, a verifier, an interpreter."""

from codegen.ir.builder import GraphBuilder
from codegen.ir.graph import Graph, Node
from codegen.ir.interpreter import run_graph
from codegen.ir.printer import format_graph
from codegen.ir.types import Quant, Value
from codegen.ir.verifier import verify_graph

__all__ = ["Graph", "GraphBuilder", "Node", "Quant", "Value", "format_graph", "run_graph", "verify_graph"]
