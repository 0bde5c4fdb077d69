# cmake -DDIS=spirv-dis -DAS=spirv-as -DIN=in.spv -DOUT=out.spv -DENTRY=name -P rename_entry.cmake
# Renames the entry point "main" of a SPIR-V module (glslc always calls it main) and drops its
# WorkgroupSize built-in decoration.
execute_process(COMMAND ${DIS} --raw-id ${IN} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "spirv-dis failed on ${IN}")
endif()
string(REPLACE "\"main\"" "\"${ENTRY}\"" text "${text}")
# glslc always declares gl_WorkGroupSize as a BuiltIn WorkgroupSize constant. Two of them in one
# linked module would be ambiguous (the built-in applies to every entry point), and these
# shaders do not read it, so the decoration goes.
string(REGEX REPLACE "OpDecorate %[0-9]+ BuiltIn WorkgroupSize\n" "" text "${text}")
file(WRITE ${OUT}.spvasm "${text}")
execute_process(COMMAND ${AS} --target-env vulkan1.2 ${OUT}.spvasm -o ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "spirv-as failed on ${OUT}.spvasm")
endif()
