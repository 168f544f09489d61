"""Configuration: YAML schemas, the channel schema language, resolution and validation."""

from terrarium.config.creature import LoadedCreature, SkillDoc, merge_configs
from terrarium.config.models import (
    ChannelDecl,
    CreatureConfig,
    KohakuPackage,
    TerrariumFile,
)
from terrarium.config.schema_lang import FieldInfo, MessageType
from terrarium.config.team import (
    ChannelDef,
    CreatureDef,
    Team,
    load_any,
    load_package,
    load_single_creature,
    load_team,
)

__all__ = [
    "ChannelDecl",
    "ChannelDef",
    "CreatureConfig",
    "CreatureDef",
    "FieldInfo",
    "KohakuPackage",
    "LoadedCreature",
    "MessageType",
    "SkillDoc",
    "Team",
    "TerrariumFile",
    "load_any",
    "load_package",
    "load_single_creature",
    "load_team",
    "merge_configs",
]
