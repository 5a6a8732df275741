from runtime.memory.base_memory_service import (
    BaseMemoryService,
    MemoryEntry,
    SearchMemoryResponse,
)
from runtime.memory.in_memory_memory_service import InMemoryMemoryService

__all__ = [
    "BaseMemoryService",
    "InMemoryMemoryService",
    "MemoryEntry",
    "SearchMemoryResponse",
]
