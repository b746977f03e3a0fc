// Package resolve decides, without a cluster, two things the Agent
// controller reports: whether an Agent's dependencies are met
// (Dependencies, for the DependenciesReady condition and
// status.dependencies), and whether its capability schemas are valid
// (Capabilities).
//
// # Dependencies
//
// A required dependency is met by another Agent of the namespace whose
// spec.agent.id is the dependency's agent_id, whose status is phase Ready
// for its current generation (status.observedGeneration ==
// metadata.generation, and not being deleted), and whose spec.agent.version
// is within [min_version, max_version] (each bound optional, inclusive,
// compared as semantic versions). Of several Agents with the id, the one
// chosen is one that meets it, else one in range, then the highest
// version, then the first name. Optional dependencies never block. A cycle
// of required dependencies through the agent (an agent needing its own id
// included) blocks it: the shortest is found by a breadth-first search over
// ids that expands each id once, so one call costs time linear in the
// namespace's Agents and dependencies (2 to 3 ms for 1100 Agents of 32
// dependencies each). The condition's reason is the worst problem: cycle,
// then missing, then version out of range, then not ready. Messages name
// the ids waited for and are at most 1024 bytes, cut on a rune boundary.
// An id both required and optional is listed once, as required
// (status.dependencies is a map keyed by agentId), and the list holds at
// most MaxDependencies (64) entries.
//
// # Capabilities
//
// Each input_schema and output_schema is either a JSON Schema object,
// compiled with github.com/santhosh-tekuri/jsonschema/v6 (the $schema of
// draft-04, -06, -07, 2019-09 or 2020-12 is honoured; 2020-12 is the
// default), or a string holding an absolute http, https or urn URI, which
// is recorded and neither fetched nor compiled.
//
// The schemas are hostile input to the manager, so nothing is ever fetched
// (the compiler's loader refuses every URL, so a $ref to http:// or file://
// fails to compile) and each schema is bounded before it is compiled, by a
// streaming scan that builds nothing: at most MaxSchemaBytes (64 KiB),
// MaxSchemaDepth (64) levels of nesting, MaxSchemaObjects (1000) JSON
// objects and MaxSchemaBooleans (1000) booleans (true and false are
// subschemas too), numbers of at most 64 characters with an exponent
// within ±400 (the compiler reads them as exact rationals), and
// MaxAgentSchemaObjects and MaxAgentSchemaBooleans (8000 each) across all
// of an Agent's schemas. The compiler's time grows faster than its input
// (its work grows with the square of the subschemas, and a 64 KiB chain of
// 8000 nested "not" took over ten minutes); within these bounds the worst
// schema found takes about 0.2 s and the worst Agent about 1.3 s of one
// core, so a caller checks each generation once, not every reconcile.
// Patterns are compiled once each, within MaxRegexpCost estimated
// instructions for the whole Agent. A panic in the compiler is reported as
// an invalid schema. Each refusal is a *CapabilityError naming the
// capability and the schema's field; it wraps one of the Err* errors when
// the problem is a bound or a fetch.
package resolve
