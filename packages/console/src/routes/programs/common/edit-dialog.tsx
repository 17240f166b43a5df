import { useState, type ReactNode } from 'react';
import { Button, Group, Modal, Stack, type ButtonProps } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { FieldValues } from 'react-hook-form';
import { FormErrors, type ApiForm } from '../../../lib/forms';

interface EditDialogProps<T extends FieldValues> extends ButtonProps {
  /** The button that opens the dialog. */
  label: ReactNode;
  'aria-label'?: string;
  title: string;
  submitLabel: string;
  /** The dialog's form (lib/forms): its fields show their limits and the refusals that name them. */
  form: ApiForm<T>;
  /** The values the form starts from each time the dialog opens. */
  values: () => T;
  onSubmit: (values: T) => Promise<unknown>;
  children: ReactNode;
}

/** A button opening a dialog with a form; the dialog stays open and shows the refusal on its fields when the change is refused. */
export function EditDialog<T extends FieldValues>({ label, title, submitLabel, form, values, onSubmit, children, ...button }: EditDialogProps<T>) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const close = () => {
    setOpen(false);
    form.clearRefusal();
  };
  return (
    <>
      <Button
        variant="default"
        {...button}
        onClick={() => {
          form.reset(values());
          form.clearRefusal();
          setOpen(true);
        }}
      >
        {label}
      </Button>
      <Modal opened={open} onClose={close} title={title} centered closeButtonProps={{ 'aria-label': t('common.close') }}>
        <form
          noValidate
          onSubmit={form.submit(async (submitted) => {
            await onSubmit(submitted);
            setOpen(false);
          })}
        >
          <Stack>
            {children}
            <FormErrors form={form} />
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                {t('common.cancel')}
              </Button>
              <Button type="submit" loading={form.formState.isSubmitting}>
                {submitLabel}
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </>
  );
}
