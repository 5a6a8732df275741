from runtime.artifacts.base_artifact_service import (
    BaseArtifactService,
    is_user_scoped,
    validate_filename,
)
from runtime.artifacts.in_memory_artifact_service import InMemoryArtifactService

__all__ = [
    "BaseArtifactService",
    "InMemoryArtifactService",
    "is_user_scoped",
    "validate_filename",
]
