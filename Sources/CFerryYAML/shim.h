// libyaml's event parser, for checking a YAML document's size, nesting and aliases before it is
// composed into a tree (FerryPipeline/YAML/YAMLPreflight.swift is the only user).
#include <yaml.h>
