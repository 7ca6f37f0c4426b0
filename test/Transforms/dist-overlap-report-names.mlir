// Function names are JSON strings, escaped: both outputs stay valid JSON
// for any symbol name.
// RUN: dist-opt %s --dist-overlap-report="format=json output=%t.json trace-file=%t.trace.json" -o /dev/null
// RUN: %python -c "import json, sys; print([f['name'] for f in json.load(open(sys.argv[1]))['functions']]); print(sorted({e['args']['name'] for e in json.load(open(sys.argv[2]))['traceEvents'] if e['name'] == 'process_name'}))" %t.json %t.trace.json | FileCheck %s
// CHECK: ['we"ird', 'back\\slash', 'new\nline']
// CHECK-NEXT: ['@back\\slash', '@new\nline', '@we"ird']

func.func @"we\"ird"() {
  return
}
func.func @"back\\slash"() {
  return
}
func.func @"new\nline"() {
  return
}
